# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_infera_global_optspecs
    string join \n kubeconfig= context= cluster= user= n/namespace= as= as-group= request-timeout= color= v/v= h/help V/version
end

function __fish_kubectl_infera_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_infera_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_infera_using_subcommand
    set -l cmd (__fish_kubectl_infera_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "init" -d 'Install or upgrade the operator: CRD, namespace, RBAC, Deployment, metrics Service'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "uninstall" -d 'Remove exactly what `init` installed'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "doctor" -d 'Check that the cluster can run Infera (and, with --for, a given spec)'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "deploy" -d 'Create or update an InferaDeployment (from a file, flags, or an interactive wizard)'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "status" -d 'Show InferaDeployments: a list, or one in detail'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "scale" -d 'Set the replicas of pools: `scale NAME decode=4 prefill=2`'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "rollout" -d 'Follow, pause or resume the rollout of a deployment\'s worker pools'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "logs" -d 'Print the logs of a deployment\'s pods together, each line prefixed by pool/pod'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "report" -d 'Write a support bundle of a deployment (.tar.gz): spec, status, children, pods, events, logs, doctor, the operator; no Secret value'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "render" -d 'Print every object the operator would create for a spec (offline)'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "planner" -d 'Explain what the SLO planner (`spec.planner`) recommends and why, with its last decisions'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "dashboard" -d 'Print a Grafana dashboard of a deployment\'s metrics (with `spec.monitoring`)'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "bench" -d 'Measure a deployment: an in-cluster inference-perf Job sends load to its server and the latencies, throughput and goodput are printed and kept; list and compare runs'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "version" -d 'Show the plugin, CRD and operator versions'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "completion" -d 'Print a shell completion script (or install the kubectl completion shim)'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "__complete" -d 'Dynamic completion protocol used by kubectl_complete-infera'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "__generate" -d 'Regenerate crds/ and completions/ in a repository checkout'
complete -c kubectl-infera -n "__fish_kubectl_infera_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l dry-run -d 'client: print the bundle without contacting a cluster; server: let the API server check it' -r -f -a "client\t'Print what would be sent; contact no cluster'
server\t'Send the request with dryRun=All: admission and validation run, nothing is stored'
none\t'Do it for real (the default)'"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -s o -l output -d 'With --dry-run=client: output format of the bundle' -r -f -a "yaml\t''
json\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l timeout -d 'How long to wait for the CRD and (with --wait) the operator' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l wait -d 'Wait until the operator Deployment is available'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l force-conflicts -d 'Take ownership of fields another field manager owns (kubectl\'s --force-conflicts)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l allow-downgrade -d 'Allow installing an older version over a newer one'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -l take-over -d 'Take over from another controller of InferaDeployments (upstream Infera\'s operator): scale it to 0, take the CRD\'s fields, and let our operator take the fields it owned in the children of existing InferaDeployments. Without it, init refuses to install beside one'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand init" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l dry-run -d 'client: list what would be deleted; server: send deletes with dryRun=All' -r -f -a "client\t'Print what would be sent; contact no cluster'
server\t'Send the request with dryRun=All: admission and validation run, nothing is stored'
none\t'Do it for real (the default)'"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l timeout -d 'How long --wait waits' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l force -d 'Uninstall even though InferaDeployments exist (deleting the CRD deletes them and their children)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -l wait -d 'Wait until the namespace and the CRD are gone'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand uninstall" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l for -d 'Also check whether this spec fits the cluster\'s free GPUs now, pool by pool, and, with `gaie`, its Gateway, listener and a server-side dry run of its route and pool' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -s o -l output -d 'Output format (table, json or yaml)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -l pre -d 'Pre-install checks only (before `init`): skip the Infera CRD and operator checks'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -s f -l filename -d 'An InferaDeployment YAML file (`-` reads stdin). Without it, the spec comes from flags, or from the wizard on a terminal' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l dry-run -d 'client: print the spec, contact no cluster; server: let the API server check it' -r -f -a "client\t'Print what would be sent; contact no cluster'
server\t'Send the request with dryRun=All: admission and validation run, nothing is stored'
none\t'Do it for real (the default)'"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -s o -l output -d 'Print the resulting InferaDeployment (yaml or json) instead of a summary' -r -f -a "yaml\t''
json\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l save -d 'Also write the spec to FILE (as YAML)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l timeout -d 'How long --wait waits' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l name -d 'Name of the InferaDeployment' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l backend -d 'Inference engine' -r -f -a "sglang\t''
vllm\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l model -d 'Model the workers serve: an id or path the engine resolves, or a volume the operator mounts: hf://ORG/NAME[@REVISION] (downloaded first into a 100Gi volume), pvc://CLAIM[/SUBPATH], hostPath:///PATH' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l tokenizer -d 'Tokenizer the router loads (`--router-tokenizer-path`): a Hugging Face id or a path in the server\'s image [default: the model\'s id; required with a pvc:// or hostPath:// model]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l topology -d 'Topology: aggregated, pd (prefill/decode) or multinode' -r -f -a "aggregated\t'One pool of mixed workers (prefill and decode on the same GPUs)'
pd\t'Disaggregated prefill and decode pools'
multinode\t'Mixed workers spanning several nodes per replica (LeaderWorkerSet)'"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l image -d 'Container image (default: rocm/infera:<backend>-v<version>)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l replicas -d 'Worker replicas (aggregated/multinode) [default: 1]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l prefill-replicas -d 'Prefill replicas (pd) [default: 1]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l decode-replicas -d 'Decode replicas (pd) [default: 1]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l server-replicas -d 'Server (router) replicas [default: 1]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l gpus -d 'GPUs per worker pod [default: 1]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l gpu-type -d 'GPU resource name [default: amd.com/gpu]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l gpu-product -d 'GPU product the workers must run on, e.g. MI300X (never another product; see `kubectl infera doctor`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l nodes -d 'Nodes per replica (multinode) [default: 2]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l tp -d 'Tensor-parallel size [default: GPUs per pod]; with several nodes, pipeline parallelism covers the rest' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l transfer-backend -d 'KV transfer backend for pd (e.g. mori, nixl, mooncake)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l ib-device -d 'RDMA device for the KV transfer (pd; with --rdma-resource it becomes spec.network.rdma.device)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l rdma-resource -d 'Extended resource of the RDMA NICs the prefill, decode and multi-node pods request, e.g. rdma/hca' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l rdma-network -d 'Multus NetworkAttachmentDefinition the RDMA pods attach (repeatable; needs --rdma-resource)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l router-policy -d 'Router policy of the server (e.g. kv-aware, round-robin, cache-aware)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l nats -d 'Deploy a managed NATS JetStream for KV events [default: true]' -r -f -a "true\t''
false\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l nats-storage -d 'Size of the NATS JetStream volume' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l discovery -d 'Discovery backend' -r -f -a "kubernetes\t''
etcd\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l etcd-endpoint -d 'etcd URL (with --discovery etcd)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l memory -d 'Memory per worker pod [default: 64Gi per GPU of the pod]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l shared-memory -d 'Size of the memory-backed /dev/shm per worker pod [default: 32Gi per GPU of the pod]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l startup-timeout -d 'How long a worker\'s cold start (model download and load) may take, e.g. 30m or 2h [default: 1h]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l wait -d 'Wait until the deployment is Ready; on timeout, explain what blocks it'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l force-conflicts -d 'Take ownership of fields another field manager owns'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -l no-interactive -d 'Never start the wizard, even on a terminal'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -s y -l yes -d 'Apply without asking for confirmation at the end of the wizard'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand deploy" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l load -d 'With NAME: the pools\' live load from each router and engine pod\'s /metrics, read through the API server (get on pods/proxy): requests in flight, running and waiting, KV-cache usage; `--load=10s` samples twice 10 s apart and adds tokens and requests per second and latency p50/p95 (end to end, time to first token, between tokens) over that window. With --watch, read every WINDOW (10s when none is given), the rates over the time between reads' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l prometheus -d 'With NAME: --load\'s figures from this Prometheus (e.g. http://localhost:9090 through `kubectl port-forward`) instead of the pods: the series the graph\'s PodMonitor collects (spec.monitoring), rates and latencies over --load\'s window, 1m when it gives none. With --watch, asked again every WINDOW (10s when none is given)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -s A -l all-namespaces -d 'List deployments in every namespace'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -s w -l watch -d 'Keep watching: redraw on a terminal, append a line per change otherwise (NDJSON with -o json)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand status" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l dry-run -d 'client: read the deployment and print the change, write nothing; server: send it with dryRun=All' -r -f -a "client\t'Print what would be sent; contact no cluster'
server\t'Send the request with dryRun=All: admission and validation run, nothing is stored'
none\t'Do it for real (the default)'"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l timeout -d 'How long --wait waits' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -l wait -d 'Wait until the deployment is Ready with the new replicas; on timeout, explain what blocks it'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand scale" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -f -a "pause" -d 'Hold the worker pools at the revision they run (`spec.rollout.paused: true`)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -f -a "resume" -d 'Let the worker pools roll out to the spec\'s revision again'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -f -a "status" -d 'Follow the rollout until it is complete (exit 0), or past its progressDeadlineSeconds (exit 3, with what blocks it); a line per change of the Progressing condition'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -f -a "history" -d 'List the revisions of the worker pods kept in the cluster: what changed in each, its age, which is current; with --revision, one revision\'s spec'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -f -a "undo" -d 'Return to an earlier revision (default: the one before the newest): re-applies its spec, keeping today\'s replicas, autoscaling and rollout settings; it rolls out like any change'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and not __fish_seen_subcommand_from pause resume status history undo help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from pause" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from resume" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l timeout -d 'Give up after this long (exit 3); default: follow until complete or past the deadline' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l revision -d 'Show this revision\'s spec' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -s o -l output -d 'Output format (table, json or yaml; json and yaml print the ControllerRevisions)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from history" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l to-revision -d 'The revision to return to (see `rollout history`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from undo" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from help" -f -a "pause" -d 'Hold the worker pools at the revision they run (`spec.rollout.paused: true`)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from help" -f -a "resume" -d 'Let the worker pools roll out to the spec\'s revision again'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from help" -f -a "status" -d 'Follow the rollout until it is complete (exit 0), or past its progressDeadlineSeconds (exit 3, with what blocks it); a line per change of the Progressing condition'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from help" -f -a "history" -d 'List the revisions of the worker pods kept in the cluster: what changed in each, its age, which is current; with --revision, one revision\'s spec'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from help" -f -a "undo" -d 'Return to an earlier revision (default: the one before the newest): re-applies its spec, keeping today\'s replicas, autoscaling and rollout settings; it rolls out like any change'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand rollout; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l since -d 'Only lines newer than this, e.g. 30s, 15m or 2h (then every line since, unless --tail)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l tail -d 'Lines from the end of each container\'s log; -1 for all [default: 10, or all with --since]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l rank -d 'Only this rank of the multi-node pools (0 is the leader)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l max-log-requests -d 'Logs read at once; with -f, the most that are followed from the start' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -s f -l follow -d 'Keep printing lines as they come; pods that start later (a rollout, a scale, a restart) join from their first line'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -s p -l previous -d 'The log of each container\'s previous instance (before its last restart)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l timestamps -d 'Show the time the API server recorded in front of each line'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -l operator -d 'Also the operator\'s log lines about this deployment'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand logs" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -s o -l output -d 'The file to write [default: infera-report-NAMESPACE-NAME-<UTC time>.tar.gz]' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l tail -d 'Lines from the end of each container\'s log, and of its previous instance' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand report" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -s f -l filename -d 'The InferaDeployment YAML (or JSON); `-` reads stdin' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -s o -l output -d 'Output format' -r -f -a "yaml\t''
json\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand render" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -f -a "explain" -d 'The latencies the planner last saw against their targets, each pool\'s load, learned capacity and recommended replicas with the reason, and the last decisions'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and not __fish_seen_subcommand_from explain help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -s o -l output -d 'Output format (table, json or yaml)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from explain" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from help" -f -a "explain" -d 'The latencies the planner last saw against their targets, each pool\'s load, learned capacity and recommended replicas with the reason, and the last decisions'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand planner; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -s f -l filename -d 'Its spec instead (YAML or JSON, one InferaDeployment; `-` reads stdin): no cluster needed' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand dashboard" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l input-tokens -d 'Tokens of each prompt' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l output-tokens -d 'Tokens generated for each prompt (end of sequence ignored)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l shared-prefix -d 'Tokens at the start of each prompt that the other prompts of its group share (of --input-tokens): measures prefix caching and cache-aware routing' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l prefix-groups -d 'Groups of prompts, each with a prefix of its own [default: 10]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l prompts-per-group -d 'Distinct prompts in each group [default: 10]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l rate -d 'Requests per second, sent at a constant rate for --duration [default: 2]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l duration -d 'How long to send at --rate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l concurrency -d 'Requests in flight at once, instead of a rate (with --requests)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l requests -d 'Requests sent in all at --concurrency [default: 10 per request in flight]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l slo-ttft -d 'Time-to-first-token target: goodput counts the requests that meet every target given' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l slo-itl -d 'Inter-token-latency target' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l model -d 'The model name sent [default: the first the server lists at /v1/models]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l tokenizer -d 'Hugging Face id or path of the tokenizer that counts tokens [default: the model\'s]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l target -d 'Where the load goes: the Gateway in front of a GAIE deployment, or the server Service [default: gateway with spec.gaie, else server]' -r -f -a "gateway\t'The Gateway of `spec.gaie` (its address and listener port; the route\'s Host)'
server\t'The server Service (upstream\'s router)'"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l url -d 'Where to send the load instead, a base URL' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l workers -d 'inference-perf worker processes (each keeps up to 100 requests in flight)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l image -d 'The inference-perf image [default: quay.io/inference-perf/inference-perf:v0.7.0]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l timeout -d 'How long the run may take (the Job\'s deadline) and the command waits [default: its duration plus 10m, for the image and the tokenizer]' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -s o -l output -d 'Output format (table, json or yaml)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -l no-wait -d 'Create the run and return; `bench show RUN` collects its result later'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -a "list" -d 'The runs kept for a deployment (or every deployment of the namespace), oldest first'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -a "show" -d 'One run: its load and, once finished, its figures (collected from the Job if not yet)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -a "compare" -d 'Two runs side by side, with the change from the first to the second'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and not __fish_seen_subcommand_from list show compare help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format (table, json or yaml)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -s o -l output -d 'Output format (table, json or yaml)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -s o -l output -d 'Output format (table, json or yaml)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from compare" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "list" -d 'The runs kept for a deployment (or every deployment of the namespace), oldest first'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "show" -d 'One run: its load and, once finished, its figures (collected from the Job if not yet)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "compare" -d 'Two runs side by side, with the change from the first to the second'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -s o -l output -d 'Output format (table, json or yaml)' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -l client -d 'Only the plugin\'s version; contact no cluster'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand version" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l install-shim -d 'Write the `kubectl_complete-infera` shim into DIR (default: Krew\'s bin directory: $KREW_ROOT/bin, else where `kubectl-krew` is on PATH, else ~/.krew/bin), so `kubectl infera <TAB>` completes' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __complete" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -s n -l namespace -d 'Namespace (default: the context\'s namespace, else `default`)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l as -d 'Username to impersonate' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l as-group -d 'Group to impersonate (repeatable)' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l request-timeout -d 'Timeout of a single API request, e.g. 30s or 1m; 0 means none' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -l color -d 'Colour: auto (on a terminal unless NO_COLOR is set), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -s v -l v -d 'Log verbosity like kubectl\'s -v: 6 logs every API request to stderr' -r
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -s h -l help -d 'Print help'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand __generate" -s V -l version -d 'Print version'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "init" -d 'Install or upgrade the operator: CRD, namespace, RBAC, Deployment, metrics Service'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "uninstall" -d 'Remove exactly what `init` installed'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "doctor" -d 'Check that the cluster can run Infera (and, with --for, a given spec)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "deploy" -d 'Create or update an InferaDeployment (from a file, flags, or an interactive wizard)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "status" -d 'Show InferaDeployments: a list, or one in detail'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "scale" -d 'Set the replicas of pools: `scale NAME decode=4 prefill=2`'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "rollout" -d 'Follow, pause or resume the rollout of a deployment\'s worker pools'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "logs" -d 'Print the logs of a deployment\'s pods together, each line prefixed by pool/pod'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "report" -d 'Write a support bundle of a deployment (.tar.gz): spec, status, children, pods, events, logs, doctor, the operator; no Secret value'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "render" -d 'Print every object the operator would create for a spec (offline)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "planner" -d 'Explain what the SLO planner (`spec.planner`) recommends and why, with its last decisions'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "dashboard" -d 'Print a Grafana dashboard of a deployment\'s metrics (with `spec.monitoring`)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "bench" -d 'Measure a deployment: an in-cluster inference-perf Job sends load to its server and the latencies, throughput and goodput are printed and kept; list and compare runs'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "version" -d 'Show the plugin, CRD and operator versions'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "completion" -d 'Print a shell completion script (or install the kubectl completion shim)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "__complete" -d 'Dynamic completion protocol used by kubectl_complete-infera'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "__generate" -d 'Regenerate crds/ and completions/ in a repository checkout'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and not __fish_seen_subcommand_from init uninstall doctor deploy status scale rollout logs report render planner dashboard bench version completion __complete __generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from rollout" -f -a "pause" -d 'Hold the worker pools at the revision they run (`spec.rollout.paused: true`)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from rollout" -f -a "resume" -d 'Let the worker pools roll out to the spec\'s revision again'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from rollout" -f -a "status" -d 'Follow the rollout until it is complete (exit 0), or past its progressDeadlineSeconds (exit 3, with what blocks it); a line per change of the Progressing condition'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from rollout" -f -a "history" -d 'List the revisions of the worker pods kept in the cluster: what changed in each, its age, which is current; with --revision, one revision\'s spec'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from rollout" -f -a "undo" -d 'Return to an earlier revision (default: the one before the newest): re-applies its spec, keeping today\'s replicas, autoscaling and rollout settings; it rolls out like any change'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from planner" -f -a "explain" -d 'The latencies the planner last saw against their targets, each pool\'s load, learned capacity and recommended replicas with the reason, and the last decisions'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "list" -d 'The runs kept for a deployment (or every deployment of the namespace), oldest first'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "show" -d 'One run: its load and, once finished, its figures (collected from the Job if not yet)'
complete -c kubectl-infera -n "__fish_kubectl_infera_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "compare" -d 'Two runs side by side, with the change from the first to the second'
