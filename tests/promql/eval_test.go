// promql-eval runs promqltest scripts — the language of Prometheus's own PromQL tests (`load`
// series, then `eval instant at T EXPR` followed by the series it must return, none for none) —
// on the PromQL engine of one Prometheus release: the one the Prometheus Operator of
// tests/cluster/versions.sh deploys by default. promqltest runs only under testing.T, so this is
// a test binary: tests/cluster/build.sh builds it with `go test -c` (component promql) and the
// monitoring tests feed it the rules the operator renders.
//
//	promql-eval SCRIPT...    exit 0 when every script passes; otherwise each failure is printed
package promqleval

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
)

func TestScripts(t *testing.T) {
	if flag.NArg() == 0 {
		t.Fatal("usage: promql-eval SCRIPT...")
	}
	// The engine as the Prometheus server configures it by default (cmd/prometheus/main.go:
	// the flags' defaults at :548-558, the options at :849-864).
	engine := promql.NewEngine(promql.EngineOpts{
		MaxSamples:               50000000,
		Timeout:                  2 * time.Minute,
		LookbackDelta:            5 * time.Minute,
		NoStepSubqueryIntervalFn: func(int64) int64 { return time.Minute.Milliseconds() },
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
	})
	for _, path := range flag.Args() {
		t.Run(path, func(t *testing.T) {
			input, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			promqltest.RunTest(t, string(input), engine)
		})
	}
}
