
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-infera' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-infera'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-infera' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Install or upgrade the operator: CRD, namespace, RBAC, Deployment, metrics Service')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly what `init` installed')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check that the cluster can run Infera (and, with --for, a given spec)')
            [CompletionResult]::new('deploy', 'deploy', [CompletionResultType]::ParameterValue, 'Create or update an InferaDeployment (from a file, flags, or an interactive wizard)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show InferaDeployments: a list, or one in detail')
            [CompletionResult]::new('scale', 'scale', [CompletionResultType]::ParameterValue, 'Set the replicas of pools: `scale NAME decode=4 prefill=2`')
            [CompletionResult]::new('rollout', 'rollout', [CompletionResultType]::ParameterValue, 'Follow, pause or resume the rollout of a deployment''s worker pools')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Print the logs of a deployment''s pods together, each line prefixed by pool/pod')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Write a support bundle of a deployment (.tar.gz): spec, status, children, pods, events, logs, doctor, the operator; no Secret value')
            [CompletionResult]::new('render', 'render', [CompletionResultType]::ParameterValue, 'Print every object the operator would create for a spec (offline)')
            [CompletionResult]::new('planner', 'planner', [CompletionResultType]::ParameterValue, 'Explain what the SLO planner (`spec.planner`) recommends and why, with its last decisions')
            [CompletionResult]::new('dashboard', 'dashboard', [CompletionResultType]::ParameterValue, 'Print a Grafana dashboard of a deployment''s metrics (with `spec.monitoring`)')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Measure a deployment: an in-cluster inference-perf Job sends load to its server and the latencies, throughput and goodput are printed and kept; list and compare runs')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Show the plugin, CRD and operator versions')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (or install the kubectl completion shim)')
            [CompletionResult]::new('__complete', '__complete', [CompletionResultType]::ParameterValue, 'Dynamic completion protocol used by kubectl_complete-infera')
            [CompletionResult]::new('__generate', '__generate', [CompletionResultType]::ParameterValue, 'Regenerate crds/ and completions/ in a repository checkout')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;init' {
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'client: print the bundle without contacting a cluster; server: let the API server check it')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'With --dry-run=client: output format of the bundle')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'With --dry-run=client: output format of the bundle')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long to wait for the CRD and (with --wait) the operator')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait until the operator Deployment is available')
            [CompletionResult]::new('--force-conflicts', '--force-conflicts', [CompletionResultType]::ParameterName, 'Take ownership of fields another field manager owns (kubectl''s --force-conflicts)')
            [CompletionResult]::new('--allow-downgrade', '--allow-downgrade', [CompletionResultType]::ParameterName, 'Allow installing an older version over a newer one')
            [CompletionResult]::new('--take-over', '--take-over', [CompletionResultType]::ParameterName, 'Take over from another controller of InferaDeployments (upstream Infera''s operator): scale it to 0, take the CRD''s fields, and let our operator take the fields it owned in the children of existing InferaDeployments. Without it, init refuses to install beside one')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;uninstall' {
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'client: list what would be deleted; server: send deletes with dryRun=All')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long --wait waits')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Uninstall even though InferaDeployments exist (deleting the CRD deletes them and their children)')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait until the namespace and the CRD are gone')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;doctor' {
            [CompletionResult]::new('--for', '--for', [CompletionResultType]::ParameterName, 'Also check whether this spec fits the cluster''s free GPUs now, pool by pool, and, with `gaie`, its Gateway, listener and a server-side dry run of its route and pool')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--pre', '--pre', [CompletionResultType]::ParameterName, 'Pre-install checks only (before `init`): skip the Infera CRD and operator checks')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;deploy' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'An InferaDeployment YAML file (`-` reads stdin). Without it, the spec comes from flags, or from the wizard on a terminal')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'An InferaDeployment YAML file (`-` reads stdin). Without it, the spec comes from flags, or from the wizard on a terminal')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'client: print the spec, contact no cluster; server: let the API server check it')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Print the resulting InferaDeployment (yaml or json) instead of a summary')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Print the resulting InferaDeployment (yaml or json) instead of a summary')
            [CompletionResult]::new('--save', '--save', [CompletionResultType]::ParameterName, 'Also write the spec to FILE (as YAML)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long --wait waits')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Name of the InferaDeployment')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Inference engine')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Model the workers serve: an id or path the engine resolves, or a volume the operator mounts: hf://ORG/NAME[@REVISION] (downloaded first into a 100Gi volume), pvc://CLAIM[/SUBPATH], hostPath:///PATH')
            [CompletionResult]::new('--tokenizer', '--tokenizer', [CompletionResultType]::ParameterName, 'Tokenizer the router loads (`--router-tokenizer-path`): a Hugging Face id or a path in the server''s image [default: the model''s id; required with a pvc:// or hostPath:// model]')
            [CompletionResult]::new('--topology', '--topology', [CompletionResultType]::ParameterName, 'Topology: aggregated, pd (prefill/decode) or multinode')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'Container image (default: rocm/infera:<backend>-v<version>)')
            [CompletionResult]::new('--replicas', '--replicas', [CompletionResultType]::ParameterName, 'Worker replicas (aggregated/multinode) [default: 1]')
            [CompletionResult]::new('--prefill-replicas', '--prefill-replicas', [CompletionResultType]::ParameterName, 'Prefill replicas (pd) [default: 1]')
            [CompletionResult]::new('--decode-replicas', '--decode-replicas', [CompletionResultType]::ParameterName, 'Decode replicas (pd) [default: 1]')
            [CompletionResult]::new('--server-replicas', '--server-replicas', [CompletionResultType]::ParameterName, 'Server (router) replicas [default: 1]')
            [CompletionResult]::new('--gpus', '--gpus', [CompletionResultType]::ParameterName, 'GPUs per worker pod [default: 1]')
            [CompletionResult]::new('--gpu-type', '--gpu-type', [CompletionResultType]::ParameterName, 'GPU resource name [default: amd.com/gpu]')
            [CompletionResult]::new('--gpu-product', '--gpu-product', [CompletionResultType]::ParameterName, 'GPU product the workers must run on, e.g. MI300X (never another product; see `kubectl infera doctor`)')
            [CompletionResult]::new('--nodes', '--nodes', [CompletionResultType]::ParameterName, 'Nodes per replica (multinode) [default: 2]')
            [CompletionResult]::new('--tp', '--tp', [CompletionResultType]::ParameterName, 'Tensor-parallel size [default: GPUs per pod]; with several nodes, pipeline parallelism covers the rest')
            [CompletionResult]::new('--transfer-backend', '--transfer-backend', [CompletionResultType]::ParameterName, 'KV transfer backend for pd (e.g. mori, nixl, mooncake)')
            [CompletionResult]::new('--ib-device', '--ib-device', [CompletionResultType]::ParameterName, 'RDMA device for the KV transfer (pd; with --rdma-resource it becomes spec.network.rdma.device)')
            [CompletionResult]::new('--rdma-resource', '--rdma-resource', [CompletionResultType]::ParameterName, 'Extended resource of the RDMA NICs the prefill, decode and multi-node pods request, e.g. rdma/hca')
            [CompletionResult]::new('--rdma-network', '--rdma-network', [CompletionResultType]::ParameterName, 'Multus NetworkAttachmentDefinition the RDMA pods attach (repeatable; needs --rdma-resource)')
            [CompletionResult]::new('--router-policy', '--router-policy', [CompletionResultType]::ParameterName, 'Router policy of the server (e.g. kv-aware, round-robin, cache-aware)')
            [CompletionResult]::new('--nats', '--nats', [CompletionResultType]::ParameterName, 'Deploy a managed NATS JetStream for KV events [default: true]')
            [CompletionResult]::new('--nats-storage', '--nats-storage', [CompletionResultType]::ParameterName, 'Size of the NATS JetStream volume')
            [CompletionResult]::new('--discovery', '--discovery', [CompletionResultType]::ParameterName, 'Discovery backend')
            [CompletionResult]::new('--etcd-endpoint', '--etcd-endpoint', [CompletionResultType]::ParameterName, 'etcd URL (with --discovery etcd)')
            [CompletionResult]::new('--memory', '--memory', [CompletionResultType]::ParameterName, 'Memory per worker pod [default: 64Gi per GPU of the pod]')
            [CompletionResult]::new('--shared-memory', '--shared-memory', [CompletionResultType]::ParameterName, 'Size of the memory-backed /dev/shm per worker pod [default: 32Gi per GPU of the pod]')
            [CompletionResult]::new('--startup-timeout', '--startup-timeout', [CompletionResultType]::ParameterName, 'How long a worker''s cold start (model download and load) may take, e.g. 30m or 2h [default: 1h]')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait until the deployment is Ready; on timeout, explain what blocks it')
            [CompletionResult]::new('--force-conflicts', '--force-conflicts', [CompletionResultType]::ParameterName, 'Take ownership of fields another field manager owns')
            [CompletionResult]::new('--no-interactive', '--no-interactive', [CompletionResultType]::ParameterName, 'Never start the wizard, even on a terminal')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Apply without asking for confirmation at the end of the wizard')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Apply without asking for confirmation at the end of the wizard')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;status' {
            [CompletionResult]::new('--load', '--load', [CompletionResultType]::ParameterName, 'With NAME: the pools'' live load from each router and engine pod''s /metrics, read through the API server (get on pods/proxy): requests in flight, running and waiting, KV-cache usage; `--load=10s` samples twice 10 s apart and adds tokens and requests per second and latency p50/p95 (end to end, time to first token, between tokens) over that window. With --watch, read every WINDOW (10s when none is given), the rates over the time between reads')
            [CompletionResult]::new('--prometheus', '--prometheus', [CompletionResultType]::ParameterName, 'With NAME: --load''s figures from this Prometheus (e.g. http://localhost:9090 through `kubectl port-forward`) instead of the pods: the series the graph''s PodMonitor collects (spec.monitoring), rates and latencies over --load''s window, 1m when it gives none. With --watch, asked again every WINDOW (10s when none is given)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'List deployments in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'List deployments in every namespace')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Keep watching: redraw on a terminal, append a line per change otherwise (NDJSON with -o json)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep watching: redraw on a terminal, append a line per change otherwise (NDJSON with -o json)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;scale' {
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'client: read the deployment and print the change, write nothing; server: send it with dryRun=All')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long --wait waits')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait until the deployment is Ready with the new replicas; on timeout, explain what blocks it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;rollout' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Hold the worker pools at the revision they run (`spec.rollout.paused: true`)')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Let the worker pools roll out to the spec''s revision again')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Follow the rollout until it is complete (exit 0), or past its progressDeadlineSeconds (exit 3, with what blocks it); a line per change of the Progressing condition')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'List the revisions of the worker pods kept in the cluster: what changed in each, its age, which is current; with --revision, one revision''s spec')
            [CompletionResult]::new('undo', 'undo', [CompletionResultType]::ParameterValue, 'Return to an earlier revision (default: the one before the newest): re-applies its spec, keeping today''s replicas, autoscaling and rollout settings; it rolls out like any change')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;rollout;pause' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;rollout;resume' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;rollout;status' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long (exit 3); default: follow until complete or past the deadline')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;rollout;history' {
            [CompletionResult]::new('--revision', '--revision', [CompletionResultType]::ParameterName, 'Show this revision''s spec')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml; json and yaml print the ControllerRevisions)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml; json and yaml print the ControllerRevisions)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;rollout;undo' {
            [CompletionResult]::new('--to-revision', '--to-revision', [CompletionResultType]::ParameterName, 'The revision to return to (see `rollout history`)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;rollout;help' {
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Hold the worker pools at the revision they run (`spec.rollout.paused: true`)')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Let the worker pools roll out to the spec''s revision again')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Follow the rollout until it is complete (exit 0), or past its progressDeadlineSeconds (exit 3, with what blocks it); a line per change of the Progressing condition')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'List the revisions of the worker pods kept in the cluster: what changed in each, its age, which is current; with --revision, one revision''s spec')
            [CompletionResult]::new('undo', 'undo', [CompletionResultType]::ParameterValue, 'Return to an earlier revision (default: the one before the newest): re-applies its spec, keeping today''s replicas, autoscaling and rollout settings; it rolls out like any change')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;rollout;help;pause' {
            break
        }
        'kubectl-infera;rollout;help;resume' {
            break
        }
        'kubectl-infera;rollout;help;status' {
            break
        }
        'kubectl-infera;rollout;help;history' {
            break
        }
        'kubectl-infera;rollout;help;undo' {
            break
        }
        'kubectl-infera;rollout;help;help' {
            break
        }
        'kubectl-infera;logs' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only lines newer than this, e.g. 30s, 15m or 2h (then every line since, unless --tail)')
            [CompletionResult]::new('--tail', '--tail', [CompletionResultType]::ParameterName, 'Lines from the end of each container''s log; -1 for all [default: 10, or all with --since]')
            [CompletionResult]::new('--rank', '--rank', [CompletionResultType]::ParameterName, 'Only this rank of the multi-node pools (0 is the leader)')
            [CompletionResult]::new('--max-log-requests', '--max-log-requests', [CompletionResultType]::ParameterName, 'Logs read at once; with -f, the most that are followed from the start')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Keep printing lines as they come; pods that start later (a rollout, a scale, a restart) join from their first line')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Keep printing lines as they come; pods that start later (a rollout, a scale, a restart) join from their first line')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'The log of each container''s previous instance (before its last restart)')
            [CompletionResult]::new('--previous', '--previous', [CompletionResultType]::ParameterName, 'The log of each container''s previous instance (before its last restart)')
            [CompletionResult]::new('--timestamps', '--timestamps', [CompletionResultType]::ParameterName, 'Show the time the API server recorded in front of each line')
            [CompletionResult]::new('--operator', '--operator', [CompletionResultType]::ParameterName, 'Also the operator''s log lines about this deployment')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;report' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The file to write [default: infera-report-NAMESPACE-NAME-<UTC time>.tar.gz]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The file to write [default: infera-report-NAMESPACE-NAME-<UTC time>.tar.gz]')
            [CompletionResult]::new('--tail', '--tail', [CompletionResultType]::ParameterName, 'Lines from the end of each container''s log, and of its previous instance')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;render' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'The InferaDeployment YAML (or JSON); `-` reads stdin')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'The InferaDeployment YAML (or JSON); `-` reads stdin')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;planner' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'The latencies the planner last saw against their targets, each pool''s load, learned capacity and recommended replicas with the reason, and the last decisions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;planner;explain' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;planner;help' {
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'The latencies the planner last saw against their targets, each pool''s load, learned capacity and recommended replicas with the reason, and the last decisions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;planner;help;explain' {
            break
        }
        'kubectl-infera;planner;help;help' {
            break
        }
        'kubectl-infera;dashboard' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Its spec instead (YAML or JSON, one InferaDeployment; `-` reads stdin): no cluster needed')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Its spec instead (YAML or JSON, one InferaDeployment; `-` reads stdin): no cluster needed')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;bench' {
            [CompletionResult]::new('--input-tokens', '--input-tokens', [CompletionResultType]::ParameterName, 'Tokens of each prompt')
            [CompletionResult]::new('--output-tokens', '--output-tokens', [CompletionResultType]::ParameterName, 'Tokens generated for each prompt (end of sequence ignored)')
            [CompletionResult]::new('--shared-prefix', '--shared-prefix', [CompletionResultType]::ParameterName, 'Tokens at the start of each prompt that the other prompts of its group share (of --input-tokens): measures prefix caching and cache-aware routing')
            [CompletionResult]::new('--prefix-groups', '--prefix-groups', [CompletionResultType]::ParameterName, 'Groups of prompts, each with a prefix of its own [default: 10]')
            [CompletionResult]::new('--prompts-per-group', '--prompts-per-group', [CompletionResultType]::ParameterName, 'Distinct prompts in each group [default: 10]')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Requests per second, sent at a constant rate for --duration [default: 2]')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'How long to send at --rate')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Requests in flight at once, instead of a rate (with --requests)')
            [CompletionResult]::new('--requests', '--requests', [CompletionResultType]::ParameterName, 'Requests sent in all at --concurrency [default: 10 per request in flight]')
            [CompletionResult]::new('--slo-ttft', '--slo-ttft', [CompletionResultType]::ParameterName, 'Time-to-first-token target: goodput counts the requests that meet every target given')
            [CompletionResult]::new('--slo-itl', '--slo-itl', [CompletionResultType]::ParameterName, 'Inter-token-latency target')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model name sent [default: the first the server lists at /v1/models]')
            [CompletionResult]::new('--tokenizer', '--tokenizer', [CompletionResultType]::ParameterName, 'Hugging Face id or path of the tokenizer that counts tokens [default: the model''s]')
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'Where the load goes: the Gateway in front of a GAIE deployment, or the server Service [default: gateway with spec.gaie, else server]')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Where to send the load instead, a base URL')
            [CompletionResult]::new('--workers', '--workers', [CompletionResultType]::ParameterName, 'inference-perf worker processes (each keeps up to 100 requests in flight)')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'The inference-perf image [default: quay.io/inference-perf/inference-perf:v0.7.0]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long the run may take (the Job''s deadline) and the command waits [default: its duration plus 10m, for the image and the tokenizer]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Create the run and return; `bench show RUN` collects its result later')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The runs kept for a deployment (or every deployment of the namespace), oldest first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One run: its load and, once finished, its figures (collected from the Job if not yet)')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Two runs side by side, with the change from the first to the second')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;bench;list' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;bench;show' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;bench;compare' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;bench;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The runs kept for a deployment (or every deployment of the namespace), oldest first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One run: its load and, once finished, its figures (collected from the Job if not yet)')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Two runs side by side, with the change from the first to the second')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;bench;help;list' {
            break
        }
        'kubectl-infera;bench;help;show' {
            break
        }
        'kubectl-infera;bench;help;compare' {
            break
        }
        'kubectl-infera;bench;help;help' {
            break
        }
        'kubectl-infera;version' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (table, json or yaml)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Only the plugin''s version; contact no cluster')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;completion' {
            [CompletionResult]::new('--install-shim', '--install-shim', [CompletionResultType]::ParameterName, 'Write the `kubectl_complete-infera` shim into DIR (default: Krew''s bin directory: $KREW_ROOT/bin, else where `kubectl-krew` is on PATH, else ~/.krew/bin), so `kubectl infera <TAB>` completes')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;__complete' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;__generate' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (default: the context''s namespace, else `default`)')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single API request, e.g. 30s or 1m; 0 means none')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (on a terminal unless NO_COLOR is set), always or never')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity like kubectl''s -v: 6 logs every API request to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-infera;help' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Install or upgrade the operator: CRD, namespace, RBAC, Deployment, metrics Service')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly what `init` installed')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check that the cluster can run Infera (and, with --for, a given spec)')
            [CompletionResult]::new('deploy', 'deploy', [CompletionResultType]::ParameterValue, 'Create or update an InferaDeployment (from a file, flags, or an interactive wizard)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show InferaDeployments: a list, or one in detail')
            [CompletionResult]::new('scale', 'scale', [CompletionResultType]::ParameterValue, 'Set the replicas of pools: `scale NAME decode=4 prefill=2`')
            [CompletionResult]::new('rollout', 'rollout', [CompletionResultType]::ParameterValue, 'Follow, pause or resume the rollout of a deployment''s worker pools')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Print the logs of a deployment''s pods together, each line prefixed by pool/pod')
            [CompletionResult]::new('report', 'report', [CompletionResultType]::ParameterValue, 'Write a support bundle of a deployment (.tar.gz): spec, status, children, pods, events, logs, doctor, the operator; no Secret value')
            [CompletionResult]::new('render', 'render', [CompletionResultType]::ParameterValue, 'Print every object the operator would create for a spec (offline)')
            [CompletionResult]::new('planner', 'planner', [CompletionResultType]::ParameterValue, 'Explain what the SLO planner (`spec.planner`) recommends and why, with its last decisions')
            [CompletionResult]::new('dashboard', 'dashboard', [CompletionResultType]::ParameterValue, 'Print a Grafana dashboard of a deployment''s metrics (with `spec.monitoring`)')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Measure a deployment: an in-cluster inference-perf Job sends load to its server and the latencies, throughput and goodput are printed and kept; list and compare runs')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Show the plugin, CRD and operator versions')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (or install the kubectl completion shim)')
            [CompletionResult]::new('__complete', '__complete', [CompletionResultType]::ParameterValue, 'Dynamic completion protocol used by kubectl_complete-infera')
            [CompletionResult]::new('__generate', '__generate', [CompletionResultType]::ParameterValue, 'Regenerate crds/ and completions/ in a repository checkout')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-infera;help;init' {
            break
        }
        'kubectl-infera;help;uninstall' {
            break
        }
        'kubectl-infera;help;doctor' {
            break
        }
        'kubectl-infera;help;deploy' {
            break
        }
        'kubectl-infera;help;status' {
            break
        }
        'kubectl-infera;help;scale' {
            break
        }
        'kubectl-infera;help;rollout' {
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Hold the worker pools at the revision they run (`spec.rollout.paused: true`)')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Let the worker pools roll out to the spec''s revision again')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Follow the rollout until it is complete (exit 0), or past its progressDeadlineSeconds (exit 3, with what blocks it); a line per change of the Progressing condition')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'List the revisions of the worker pods kept in the cluster: what changed in each, its age, which is current; with --revision, one revision''s spec')
            [CompletionResult]::new('undo', 'undo', [CompletionResultType]::ParameterValue, 'Return to an earlier revision (default: the one before the newest): re-applies its spec, keeping today''s replicas, autoscaling and rollout settings; it rolls out like any change')
            break
        }
        'kubectl-infera;help;rollout;pause' {
            break
        }
        'kubectl-infera;help;rollout;resume' {
            break
        }
        'kubectl-infera;help;rollout;status' {
            break
        }
        'kubectl-infera;help;rollout;history' {
            break
        }
        'kubectl-infera;help;rollout;undo' {
            break
        }
        'kubectl-infera;help;logs' {
            break
        }
        'kubectl-infera;help;report' {
            break
        }
        'kubectl-infera;help;render' {
            break
        }
        'kubectl-infera;help;planner' {
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'The latencies the planner last saw against their targets, each pool''s load, learned capacity and recommended replicas with the reason, and the last decisions')
            break
        }
        'kubectl-infera;help;planner;explain' {
            break
        }
        'kubectl-infera;help;dashboard' {
            break
        }
        'kubectl-infera;help;bench' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The runs kept for a deployment (or every deployment of the namespace), oldest first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One run: its load and, once finished, its figures (collected from the Job if not yet)')
            [CompletionResult]::new('compare', 'compare', [CompletionResultType]::ParameterValue, 'Two runs side by side, with the change from the first to the second')
            break
        }
        'kubectl-infera;help;bench;list' {
            break
        }
        'kubectl-infera;help;bench;show' {
            break
        }
        'kubectl-infera;help;bench;compare' {
            break
        }
        'kubectl-infera;help;version' {
            break
        }
        'kubectl-infera;help;completion' {
            break
        }
        'kubectl-infera;help;__complete' {
            break
        }
        'kubectl-infera;help;__generate' {
            break
        }
        'kubectl-infera;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
