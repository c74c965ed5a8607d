// Command fakedevices is tier 3's device plugin (tests/cluster/README.md): it advertises devices
// that do not exist, so that pods asking for amd.com/gpu or an RDMA resource are scheduled on and
// admitted by a real kubelet, through the same device-plugin API (k8s.io/kubelet
// pkg/apis/deviceplugin/v1beta1) AMD's GPU and RDMA device plugins use. Allocate hands the
// container nothing: there is no /dev/kfd to mount.
//
// It registers through the kubelet's plugin watcher (a socket in <kubelet root-dir>/plugins_registry,
// pkg/apis/pluginregistration/v1) rather than /var/lib/kubelet/device-plugins/kubelet.sock, a
// fixed path two kubelets on one host would share. The watcher finds the socket again when the
// kubelet restarts.
//
//	fakedevices -registry DIR -resource amd.com/gpu=8 -resource rdma/hca=8
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	dp "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	reg "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// plugin serves one resource: the registration service the kubelet's plugin watcher calls first,
// then the device-plugin service, on one socket.
type plugin struct {
	dp.UnimplementedDevicePluginServer
	reg.UnimplementedRegistrationServer
	name    string
	socket  string
	devices []*dp.Device
}

func (p *plugin) GetInfo(context.Context, *reg.InfoRequest) (*reg.PluginInfo, error) {
	return &reg.PluginInfo{Type: reg.DevicePlugin, Name: p.name, Endpoint: p.socket, SupportedVersions: []string{dp.Version}}, nil
}

func (p *plugin) NotifyRegistrationStatus(_ context.Context, s *reg.RegistrationStatus) (*reg.RegistrationStatusResponse, error) {
	if s.PluginRegistered {
		log.Printf("%s: registered with the kubelet (%d devices)", p.name, len(p.devices))
	} else {
		log.Printf("%s: the kubelet refused the registration: %s", p.name, s.Error)
	}
	return &reg.RegistrationStatusResponse{}, nil
}

func (p *plugin) GetDevicePluginOptions(context.Context, *dp.Empty) (*dp.DevicePluginOptions, error) {
	return &dp.DevicePluginOptions{}, nil
}

func (p *plugin) ListAndWatch(_ *dp.Empty, stream dp.DevicePlugin_ListAndWatchServer) error {
	if err := stream.Send(&dp.ListAndWatchResponse{Devices: p.devices}); err != nil {
		return err
	}
	<-stream.Context().Done() // the devices never change
	return nil
}

func (p *plugin) Allocate(_ context.Context, req *dp.AllocateRequest) (*dp.AllocateResponse, error) {
	resp := &dp.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		log.Printf("%s: allocated %s", p.name, strings.Join(c.DevicesIds, ","))
		resp.ContainerResponses = append(resp.ContainerResponses, &dp.ContainerAllocateResponse{})
	}
	return resp, nil
}

type resources []string

func (r *resources) String() string     { return strings.Join(*r, " ") }
func (r *resources) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	registry := flag.String("registry", "", "the kubelet's plugin registration directory (<root-dir>/plugins_registry)")
	var specs resources
	flag.Var(&specs, "resource", "NAME=COUNT to advertise (repeatable)")
	flag.Parse()
	if *registry == "" || len(specs) == 0 {
		log.Fatal("usage: fakedevices -registry DIR -resource NAME=COUNT...")
	}
	if err := os.MkdirAll(*registry, 0o755); err != nil {
		log.Fatal(err)
	}
	var servers []*grpc.Server
	for _, spec := range specs {
		name, count, ok := strings.Cut(spec, "=")
		n, err := strconv.Atoi(count)
		if !ok || err != nil || n < 1 || !strings.Contains(name, "/") {
			log.Fatalf("-resource %q: want NAME=COUNT, e.g. amd.com/gpu=8", spec)
		}
		p := &plugin{name: name, socket: filepath.Join(*registry, strings.NewReplacer("/", "_", ".", "_").Replace(name)+".sock")}
		for i := 0; i < n; i++ {
			p.devices = append(p.devices, &dp.Device{ID: fmt.Sprintf("%s-%d", name[strings.LastIndex(name, "/")+1:], i), Health: dp.Healthy})
		}
		_ = os.Remove(p.socket)
		l, err := net.Listen("unix", p.socket)
		if err != nil {
			log.Fatal(err)
		}
		s := grpc.NewServer()
		reg.RegisterRegistrationServer(s, p)
		dp.RegisterDevicePluginServer(s, p)
		go func() { log.Fatal(s.Serve(l)) }()
		servers = append(servers, s)
		log.Printf("%s: %d devices on %s", name, n, p.socket)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	for _, s := range servers {
		s.Stop() // closes and removes the sockets: the kubelet deregisters the resources
	}
}
