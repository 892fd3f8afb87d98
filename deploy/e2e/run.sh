#!/usr/bin/env bash
# deploy/e2e/run.sh: a one-node Kubernetes cluster built on this machine
# from Debian packages and the Go module proxy alone, the project's own
# manifests and `openload k8s run` run on it, checked, and everything torn
# down again by PID. See README.md beside this file.
#
#   run.sh [all]    install, build, up, test, down (down also on failure)
#   run.sh install  the Debian packages
#   run.sh build    the cluster's binaries (cached) and openload
#   run.sh up       start the cluster (builds first if needed)
#   run.sh test     the checks, on a cluster that is up
#   run.sh down     stop everything this script started, remove what it made
#   run.sh env      print the KUBECONFIG line for a shell
#
# Needs root. Environment: OPENLOAD_E2E_CACHE (builds, kept), OPENLOAD_E2E_OUT
# (logs and results, kept), OPENLOAD_E2E_STATE (the cluster's state, removed
# by down), OPENLOAD_E2E_KEEP=1 (all: leave the cluster up at the end).
set -euo pipefail

E2E=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$E2E/../.." && pwd)

K8S_VERSION=v1.37.2
K8S_STAGING=v0.37.2 # k8s.io/kubernetes' staging modules, released as v0.x
COREDNS_VERSION=v1.15.0

CACHE=${OPENLOAD_E2E_CACHE:-/var/cache/openload-e2e}
STATE=${OPENLOAD_E2E_STATE:-/var/lib/openload-e2e}
OUT=${OPENLOAD_E2E_OUT:-/tmp/openload-e2e}
RUNDIR=/run/openload-e2e

NODE=openload-e2e # the node's name, also the cgroup parent of every pod
NS=openload-e2e   # the namespace the checks run in (Pod Security: restricted)
BRIDGE=ole2e0
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.96.0.0/16
API_SVC_IP=10.96.0.1
DNS_IP=10.96.0.10
ETCD_CLIENT=127.0.0.1:23790
ETCD_PEER=127.0.0.1:23800
API_PORT=6443

K8S_BIN=$CACHE/k8s-$K8S_VERSION/bin
COREDNS_BIN=$CACHE/coredns-$COREDNS_VERSION/bin/coredns
KUBECTL=${KUBECTL:-$K8S_BIN/kubectl}
PKI=$STATE/pki
KCFG=$STATE/kubeconfig
PIDS=$STATE/pids
LOG=$OUT/log
export KUBECONFIG=$KCFG/admin.kubeconfig

# ---------------------------------------------------------------- timing

TIMINGS=$OUT/timings.txt

now() { date +%s.%N; }

# stage NAME CMD...: run CMD, print and record how long it took. CMD runs
# in a subshell of its own, in the background and waited for, so that
# set -e holds inside it (in "CMD || ..." bash would ignore it) and its
# first failing command ends the stage.
stage() {
	local name=$1 t0 t1 rc=0
	shift
	echo "== $name"
	t0=$(now)
	("$@") &
	wait $! || rc=$?
	t1=$(now)
	printf '%-36s %7.1f s%s\n' "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
		"$([ $rc = 0 ] || echo "  FAILED (exit $rc)")" | tee -a "$TIMINGS"
	return $rc
}

log() { echo "   $*"; }
die() {
	echo "e2e: $*" >&2
	exit 1
}

# ---------------------------------------------------------------- install

PACKAGES=(etcd-server containerd runc containernetworking-plugins iptables nftables conntrack
	iproute2 openssl jq curl ca-certificates)

do_install() {
	local missing=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} = 0 ]; then
		log "installed already: ${PACKAGES[*]}"
		return
	fi
	log "installing: ${missing[*]}"
	# Beside another apt-get (unattended-upgrades on a fresh machine), wait
	# for its lock rather than fail at once.
	local lock=(-o DPkg::Lock::Timeout=600)
	apt-get "${lock[@]}" update -qq
	# The packages' own services must not start: this script starts its own
	# etcd and containerd, on its own sockets and directories.
	local policy=/usr/sbin/policy-rc.d made=
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\nexit 101\n' >$policy && chmod +x $policy && made=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}" >"$LOG/apt.log" 2>&1 ||
		{ tail -20 "$LOG/apt.log"; [ -z "$made" ] || rm -f $policy; return 1; }
	[ -z "$made" ] || rm -f $policy
}

# ---------------------------------------------------------------- build

# The scratch module that builds Kubernetes' commands: k8s.io/kubernetes
# replaces its staging modules (k8s.io/api, k8s.io/apiserver, ...) with
# directories of its own tree, which a dependency's replace cannot do, so
# each is replaced here with its release of the same version.
k8s_module() {
	local dir=$CACHE/k8s-$K8S_VERSION gomod
	mkdir -p "$dir"
	[ -s "$dir/go.sum" ] && return
	gomod=$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .GoMod)
	{
		echo "module openload-e2e/k8s"
		echo
		echo "go 1.26.0"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		echo "replace ("
		awk -v v="$K8S_STAGING" '$2 == "=>" && $3 ~ /^\.\/staging\// { printf "\t%s => %s %s\n", $1, $1, v }' "$gomod"
		echo ")"
	} >"$dir/go.mod"
	(cd "$dir" && go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
		"k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
		"k8s.io/kubernetes/cmd/kube-scheduler@$K8S_VERSION" \
		"k8s.io/kubernetes/cmd/kubelet@$K8S_VERSION" \
		"k8s.io/kubernetes/cmd/kube-proxy@$K8S_VERSION" \
		"k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION") >"$LOG/go-get-k8s.log" 2>&1 ||
		{ tail -20 "$LOG/go-get-k8s.log"; rm -f "$dir/go.sum"; return 1; }
}

# build_k8s NAME: one of Kubernetes' commands into the cache, unless there.
build_k8s() {
	local name=$1 dir=$CACHE/k8s-$K8S_VERSION ld=() minor
	[ -x "$K8S_BIN/$name" ] && { log "cached: $K8S_BIN/$name"; return; }
	minor=${K8S_VERSION#v1.}
	minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=("-X $pkg.gitVersion=$K8S_VERSION" "-X $pkg.gitMajor=1" "-X $pkg.gitMinor=$minor"
			"-X $pkg.gitTreeState=clean" "-X $pkg.buildDate=1970-01-01T00:00:00Z")
	done
	mkdir -p "$K8S_BIN"
	(cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w ${ld[*]}" \
		-o "$K8S_BIN/$name.tmp" "k8s.io/kubernetes/cmd/$name") >"$LOG/build-$name.log" 2>&1 ||
		{ tail -20 "$LOG/build-$name.log"; return 1; }
	mv "$K8S_BIN/$name.tmp" "$K8S_BIN/$name"
}

build_coredns() {
	[ -x "$COREDNS_BIN" ] && { log "cached: $COREDNS_BIN"; return; }
	mkdir -p "$(dirname "$COREDNS_BIN")"
	GOBIN=$(dirname "$COREDNS_BIN") CGO_ENABLED=0 go install -trimpath -ldflags '-s -w' \
		"github.com/coredns/coredns@$COREDNS_VERSION" >"$LOG/build-coredns.log" 2>&1 ||
		{ tail -20 "$LOG/build-coredns.log"; return 1; }
}

# openload from the repository this script is in, as ../../Dockerfile builds it.
build_openload() {
	mkdir -p "$OUT/bin"
	(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$OUT/bin/openload" ./cmd/openload) ||
		return 1
	(cd "$E2E" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$OUT/bin/pause" ./pause)
}

do_build() {
	stage "build: go get k8s $K8S_VERSION" k8s_module
	for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
		stage "build: $c" build_k8s $c
	done
	stage "build: coredns $COREDNS_VERSION" build_coredns
	stage "build: openload, pause" build_openload
}

# ---------------------------------------------------------------- before

# What the cluster changes on the machine, recorded before it starts so
# that down can put it back: sysctls the kubelet, kube-proxy and the CNI
# bridge set, the iptables rules, network namespaces, and which of the
# directories the components write outside $STATE already existed.
SYSCTLS=(net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding
	net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
	vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes
	net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
	net.netfilter.nf_conntrack_tcp_timeout_close_wait)
OUTSIDE=(/var/lib/cni /var/log/pods /var/log/containers /run/containerd /var/lib/kubelet
	/usr/libexec/kubernetes /run/netns /var/lib/containerd /opt/containerd /etc/cni)
BEFORE=$STATE/before

record_before() {
	[ -e "$BEFORE/done" ] && return # a second up keeps the first record
	mkdir -p "$BEFORE"
	for k in "${SYSCTLS[@]}"; do
		v=$(sysctl -n "$k" 2>/dev/null) && printf '%s\t%s\n' "$k" "$v"
	done >"$BEFORE/sysctl"
	for p in "${OUTSIDE[@]}"; do [ -e "$p" ] && echo "$p"; done >"$BEFORE/paths"
	ls /run/netns 2>/dev/null >"$BEFORE/netns" || true
	iptables-save >"$BEFORE/iptables" 2>/dev/null || true
	ip6tables-save >"$BEFORE/ip6tables" 2>/dev/null || true
	nft list tables >"$BEFORE/nft" 2>/dev/null || true
	ip -o link show | awk -F': ' '{ print $2 }' | sed 's/@.*//' >"$BEFORE/links"
	touch "$BEFORE/done"
}

# ---------------------------------------------------------------- certificates

pki_cert() { # NAME CN [O] [SAN]: a key and a certificate signed by the cluster's CA
	local name=$1 cn=$2 o=${3:-} san=${4:-}
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$PKI/$name.key" -subj "/CN=$cn${o:+/O=$o}" -out "$PKI/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -z "$san" ] || echo "subjectAltName=$san"
	} >"$PKI/$name.ext"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 7 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
	rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

kubeconfig() { # NAME SERVER: a kubeconfig for the client certificate NAME
	cat >"$KCFG/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: $NODE
  cluster:
    certificate-authority: $PKI/ca.crt
    server: $2
users:
- name: $1
  user:
    client-certificate: $PKI/$1.crt
    client-key: $PKI/$1.key
contexts:
- name: $NODE
  context: {cluster: $NODE, user: $1, namespace: $NS}
current-context: $NODE
KC
}

do_certs() {
	[ -s "$KCFG/admin.kubeconfig" ] && return
	mkdir -p "$PKI" "$KCFG"
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
		-keyout "$PKI/ca.key" -subj "/CN=openload-e2e-ca" -out "$PKI/ca.crt" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
	pki_cert apiserver kube-apiserver "" \
		"DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$API_SVC_IP,IP:$NODE_IP"
	pki_cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
	pki_cert admin openload-e2e-admin system:masters
	pki_cert controller-manager system:kube-controller-manager
	pki_cert scheduler system:kube-scheduler
	pki_cert kubelet "system:node:$NODE" system:nodes
	pki_cert kubelet-serving "system:node:$NODE" system:nodes "DNS:$NODE,IP:$NODE_IP,IP:127.0.0.1"
	pki_cert proxy system:kube-proxy
	openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/sa.key"
	openssl ec -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	for c in admin controller-manager scheduler kubelet proxy; do
		kubeconfig $c "https://$NODE_IP:$API_PORT"
	done
}

# ---------------------------------------------------------------- configuration

node_ip() { ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p'; }

do_config() {
	mkdir -p "$STATE/etc" "$STATE/cni/net.d" "$STATE/kubelet" "$RUNDIR"
	# containerd: its own root, state and socket. restrict_oom_score_adj:
	# the microVM gives root no CAP_SYS_RESOURCE, and runc's write of a
	# lower oom_score_adj than its own fails every sandbox with "can't get
	# final child's PID from pipe: EOF"; restricted, runc never lowers it.
	cat >"$STATE/etc/containerd.toml" <<TOML
version = 2
root = "$STATE/containerd"
state = "$RUNDIR/containerd"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$RUNDIR/containerd/containerd.sock"
[ttrpc]
  address = "$RUNDIR/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "openload-e2e.local/pause:1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$RUNDIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
TOML
	# One bridge of its own name (down deletes it), addresses from a
	# directory under $STATE.
	cat >"$STATE/cni/net.d/10-openload-e2e.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "openload-e2e",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]],
               "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$STATE/cni/ipam"}
    }
  ]
}
JSON
	# failCgroupV1: false: the microVM mounts cgroup v1, which the kubelet
	# refuses by default since 1.35. The pods' cgroups live under
	# /$NODE in every controller, which down removes.
	cat >"$STATE/etc/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$NODE
containerRuntimeEndpoint: unix://$RUNDIR/containerd/containerd.sock
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
failSwapOn: false
podLogsDir: $STATE/pod-logs
volumePluginDir: $STATE/kubelet/volume-plugins
maxPods: 30
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
YAML
	cat >"$STATE/etc/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $KCFG/proxy.kubeconfig}
hostnameOverride: $NODE
mode: iptables
clusterCIDR: $POD_CIDR
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
}

# ---------------------------------------------------------------- processes

# start NAME CMD...: CMD in its own session, its PID in $PIDS/NAME.
start() {
	local name=$1 pid
	shift
	mkdir -p "$PIDS"
	if pid=$(alive "$name"); then
		log "$name: running already (pid $pid)"
		return
	fi
	setsid "$@" >"$LOG/$name.log" 2>&1 </dev/null &
	pid=$!
	echo "$pid $(readlink -f "$1" 2>/dev/null || command -v "$1")" >"$PIDS/$name"
	log "$name: pid $pid"
}

# alive NAME: print NAME's PID if it is still the process start started.
alive() {
	local pid exe
	[ -s "$PIDS/$1" ] || return 1
	read -r pid exe <"$PIDS/$1"
	[ "$(readlink -f /proc/"$pid"/exe 2>/dev/null)" = "$exe" ] || return 1
	echo "$pid"
}

# stop NAME: SIGTERM, then SIGKILL after 20 s.
stop() {
	local pid i
	pid=$(alive "$1") || { rm -f "$PIDS/$1"; return 0; }
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 100); do
		alive "$1" >/dev/null || break
		sleep 0.2
	done
	if alive "$1" >/dev/null; then
		log "$1: pid $pid still running after 20 s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.5
	fi
	log "$1: stopped (pid $pid)"
	rm -f "$PIDS/$1"
}

# wait_for WHAT SECONDS CMD...: poll CMD every half second.
wait_for() {
	local what=$1 n=$(($2 * 2)) i
	shift 2
	for ((i = 0; i < n; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	die "$what: not ready after $((n / 2)) s (logs: $LOG)"
}

kc() { "$KUBECTL" "$@"; }
ctr_() { ctr --address "$RUNDIR/containerd/containerd.sock" -n k8s.io "$@"; }

# ---------------------------------------------------------------- up

cgroup_root() { # the pods' cgroup parent in every v1 controller
	local c
	for c in /sys/fs/cgroup/*/; do
		[ -e "$c/cgroup.procs" ] || continue
		mkdir -p "$c$NODE"
		if [ -e "$c/cpuset.cpus" ]; then
			cat "$c/cpuset.cpus" >"$c$NODE/cpuset.cpus"
			cat "$c/cpuset.mems" >"$c$NODE/cpuset.mems"
		fi
	done
}

up_etcd() {
	start etcd /usr/bin/etcd --name "$NODE" --data-dir "$STATE/etcd" \
		--listen-client-urls "http://$ETCD_CLIENT" --advertise-client-urls "http://$ETCD_CLIENT" \
		--listen-peer-urls "http://$ETCD_PEER" --initial-advertise-peer-urls "http://$ETCD_PEER" \
		--initial-cluster "$NODE=http://$ETCD_PEER" --listen-metrics-urls "" --log-level warn
	wait_for etcd 30 curl -sf "http://$ETCD_CLIENT/health"
}

up_apiserver() {
	start kube-apiserver "$K8S_BIN/kube-apiserver" \
		--etcd-servers "http://$ETCD_CLIENT" \
		--bind-address 0.0.0.0 --secure-port "$API_PORT" --advertise-address "$NODE_IP" \
		--service-cluster-ip-range "$SVC_CIDR" \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" \
		--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
		--kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority "$PKI/ca.crt" \
		--kubelet-preferred-address-types InternalIP \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
		--profiling=false
	wait_for kube-apiserver 120 kc get --raw /readyz
}

up_controllers() {
	start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
		--kubeconfig "$KCFG/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$KCFG/controller-manager.kubeconfig" \
		--authorization-kubeconfig "$KCFG/controller-manager.kubeconfig" \
		--leader-elect=false --use-service-account-credentials \
		--root-ca-file "$PKI/ca.crt" --service-account-private-key-file "$PKI/sa.key" \
		--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
		--bind-address 127.0.0.1 --profiling=false
	start kube-scheduler "$K8S_BIN/kube-scheduler" \
		--kubeconfig "$KCFG/scheduler.kubeconfig" \
		--authentication-kubeconfig "$KCFG/scheduler.kubeconfig" \
		--authorization-kubeconfig "$KCFG/scheduler.kubeconfig" \
		--leader-elect=false --bind-address 127.0.0.1 --profiling=false
}

up_containerd() {
	start containerd /usr/bin/containerd --config "$STATE/etc/containerd.toml"
	wait_for containerd 30 ctr_ version
}

up_node() {
	cgroup_root
	start kubelet "$K8S_BIN/kubelet" --config "$STATE/etc/kubelet.yaml" \
		--kubeconfig "$KCFG/kubelet.kubeconfig" --root-dir "$STATE/kubelet" \
		--hostname-override "$NODE" --node-ip "$NODE_IP"
	start kube-proxy "$K8S_BIN/kube-proxy" --config "$STATE/etc/kube-proxy.yaml"
	wait_for "node $NODE registered" 60 kc get node "$NODE"
	kc wait --for=condition=Ready "node/$NODE" --timeout=120s >/dev/null
	wait_for kube-proxy 60 curl -sf http://127.0.0.1:10256/healthz
}

# ---------------------------------------------------------------- images

# image TAG DIR ENTRYPOINT... : a docker-archive tar of one layer made of
# DIR's files (owned by root, mtime 0), with ENTRYPOINT and user 65532, in
# $OUT/images; then imported into containerd's k8s.io namespace.
image() {
	local tag=$1 root=$2 d diff cfg
	shift 2
	d=$(mktemp -d "$OUT/image.XXXXXX")
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$root" -cf "$d/layer.tar" .
	diff=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
	mkdir "$d/$diff" && mv "$d/layer.tar" "$d/$diff/layer.tar"
	jq -n --arg diff "sha256:$diff" --args '{
		architecture: "amd64", os: "linux",
		config: {Entrypoint: $ARGS.positional, User: "65532:65532", Env: ["PATH=/"], WorkingDir: "/"},
		rootfs: {type: "layers", diff_ids: [$diff]},
		history: [{created_by: "openload deploy/e2e/run.sh"}]
	}' "$@" >"$d/config.json"
	cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
	mv "$d/config.json" "$d/$cfg.json"
	jq -n --arg cfg "$cfg.json" --arg tag "$tag" --arg layer "$diff/layer.tar" \
		'[{Config: $cfg, RepoTags: [$tag], Layers: [$layer]}]' >"$d/manifest.json"
	mkdir -p "$OUT/images"
	local tarfile=$OUT/images/${tag//[:\/]/_}.tar
	tar -C "$d" -cf "$tarfile" manifest.json "$cfg.json" "$diff/layer.tar"
	rm -rf "$d"
	ctr_ images import "$tarfile" >/dev/null
	log "$tag: $(du -h "$tarfile" | cut -f1), config sha256:${cfg:0:12}"
}

# root DIR FILE...: an image root with distroless's users, /tmp, and FILEs at /.
image_root() {
	local r=$1
	shift
	rm -rf "$r" && mkdir -p "$r/etc" "$r/tmp"
	chmod 1777 "$r/tmp"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"
	cp "$@" "$r/"
}

do_images() {
	local r=$OUT/image-root
	image_root "$r" "$OUT/bin/openload"
	image openload:dev "$r" /openload
	image_root "$r" "$OUT/bin/pause"
	image openload-e2e.local/pause:1 "$r" /pause
	image_root "$r" "$COREDNS_BIN"
	image "openload-e2e.local/coredns:${COREDNS_VERSION#v}" "$r" /coredns
	rm -rf "$r"
}

do_dns() {
	kc apply -f "$E2E/coredns.yaml" >/dev/null
	kc -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null
}

do_up() {
	NODE_IP=$(node_ip)
	[ -n "$NODE_IP" ] || die "no IPv4 address with a route: the node needs one"
	log "node $NODE at $NODE_IP; state $STATE; logs $LOG"
	[ -x "$K8S_BIN/kubelet" ] && [ -x "$COREDNS_BIN" ] && [ -x "$OUT/bin/openload" ] || do_build
	record_before
	stage "up: certificates, configuration" eval do_certs '&&' do_config
	stage "up: etcd" up_etcd
	stage "up: kube-apiserver" up_apiserver
	stage "up: controller-manager, scheduler" up_controllers
	stage "up: containerd" up_containerd
	stage "up: images" do_images
	stage "up: kubelet, kube-proxy, node Ready" up_node
	stage "up: coredns" do_dns
}

# ---------------------------------------------------------------- test

OPENLOAD=${OPENLOAD:-$OUT/bin/openload}
URL=http://openload-stub:8080/predict
RATE=${OPENLOAD_E2E_RATE:-2000}
DURATION=${OPENLOAD_E2E_DURATION:-20}
SHARDS=4
CONNS=${OPENLOAD_E2E_CONNECTIONS:-256} # each shard's -c
SHARD_CPU=${OPENLOAD_E2E_SHARD_CPU:-200m} # 4 shards + the stub's 1 CPU + CoreDNS fit in 2
FAILED=()

check() { # check NAME CMD...: a stage whose failure is recorded, not fatal
	stage "check: $1" "${@:2}" || FAILED+=("$1")
}

stub_stats() { kc get --raw "/api/v1/namespaces/$NS/services/openload-stub:http/proxy/stats"; }

# The network namespace of the stub's pod, for ss and nstat inside it.
stub_pid() {
	local id
	id=$(kc get pod -l app.kubernetes.io/name=openload-stub -o jsonpath='{.items[0].status.containerStatuses[0].containerID}')
	ctr_ tasks ls | awk -v id="${id#containerd://}" '$1 == id { print $2 }'
}

# counters NAME: the host's conntrack and TCP counters and the stub's, to
# $OUT/NAME.counters, for the resets: what the kernel dropped or reset.
counters() {
	local f=$OUT/$1.counters pid
	pid=$(stub_pid)
	{
		echo "# conntrack -S"
		conntrack -S 2>/dev/null | tr -s ' \t' '\n\n' | grep = |
			awk -F= '{ s[$1] += $2 } END { for (k in s) print "conntrack." k, s[k] }' | sort || true
		echo "# nstat -az (host: every process on the machine, not the cluster's alone)"
		nstat -saz 2>/dev/null | awk 'NR > 1 && $1 !~ /^#/ { print "host." $1, $2 }' || true
		if [ -n "$pid" ]; then
			echo "# nstat -az (stub pod)"
			nsenter -t "$pid" -n nstat -saz 2>/dev/null | awk 'NR > 1 && $1 !~ /^#/ { print "stub." $1, $2 }' || true
			echo "# ss -lnt (stub pod)"
			nsenter -t "$pid" -n ss -lnt 2>/dev/null | sed 's/^/# /' || true
		fi
	} >"$f"
}

# counters_delta A B: what changed between two snapshots, the TCP and
# conntrack counters that say why a connection was reset.
counters_delta() {
	join <(grep -v '^#' "$OUT/$1.counters" | sort) <(grep -v '^#' "$OUT/$2.counters" | sort) |
		awk '$3 != $2 { printf "%s %d\n", $1, $3 - $2 }' |
		grep -Ei 'conntrack\.(insert_failed|drop|early_drop|invalid|error)|Reset|Abort|Overflow|ListenDrop|AttemptFail|EstabReset|OutRsts|InErrs|Retrans|SynRetrans|TW' || true
}

# Every manifest in deploy/kubernetes (but the PodMonitor, whose CRD a
# plain cluster lacks) and every kustomization under deploy/, through the
# API server's validation and admission (Pod Security: restricted).
check_manifests() {
	local f rc=0 k
	for f in "$REPO"/deploy/kubernetes/*.yaml; do
		case $(basename "$f") in kustomization.yaml | podmonitor.yaml) continue ;; esac
		kc apply --dry-run=server --validate=strict -f "$f" 2>&1 | sed "s|^|   ${f#"$REPO"/}: |" || rc=1
	done
	for k in $(find "$REPO/deploy" -name kustomization.yaml -not -path '*/e2e/*' | sort); do
		k=$(dirname "$k")
		kc apply --dry-run=server --validate=strict -k "$k" 2>&1 | sed "s|^|   -k ${k#"$REPO"/}: |" || rc=1
	done
	return $rc
}

check_stub() {
	kc apply -f "$REPO/deploy/kubernetes/stub.yaml" >/dev/null
	kc rollout status deployment/openload-stub --timeout=120s >/dev/null
	stub_stats | jq -e .total >/dev/null
}

# k8s_run OUTNAME ARGS...: `openload k8s run` of this repository, its
# output in $OUT/OUTNAME.txt and its exit code in $OUT/OUTNAME.rc.
k8s_run() {
	local name=$1 rc=0
	shift
	"$OPENLOAD" k8s run --kubectl "$KUBECTL" --namespace "$NS" --image openload:dev \
		--cpu "$SHARD_CPU" --memory 128Mi "$@" >"$OUT/$name.txt" 2>&1 || rc=$?
	echo $rc >"$OUT/$name.rc"
	return $rc
}

check_run() {
	local before after rc=0 m=$OUT/merged.json
	before=$(stub_stats | jq .total)
	counters before
	k8s_run run-4 --shards $SHARDS --keep -o "$m" -r "$RATE" -d "${DURATION}s" -c "$CONNS" "$URL" || rc=$?
	sleep 1
	after=$(stub_stats | jq .total)
	counters after
	sed 's/^/   /' "$OUT/run-4.txt"
	[ $rc = 0 ] || { log "openload k8s run exited $rc"; return 1; }
	local job succeeded scheduled expected attempts sent unanswered read
	job=job/$(sed -n 's/.*k8s run: job \([a-z0-9-]*\).*/\1/p' "$OUT/run-4.txt" | head -1)
	succeeded=$(kc get "$job" -o jsonpath='{.status.succeeded}')
	scheduled=$(jq .counts.scheduled "$m")
	expected=$((RATE * DURATION))
	attempts=$(jq '.wire.attempts // .counts.sent' "$m")
	unanswered=$(jq '(.wire.unanswered_closed // 0) + (.wire.unanswered_silent // 0)' "$m")
	sent=$(jq .counts.sent "$m")
	log "$job: $succeeded of $SHARDS succeeded"
	log "merged: scheduled $scheduled (schedule: $RATE/s × ${DURATION}s = $expected), sent $sent, attempts $attempts (re-sends $(jq '.wire.resends // 0' "$m"))"
	log "stub /stats total: $before → $after: $((after - before)) requests read"
	log "merged error kinds: $(jq -c .error_kinds "$m"), status $(jq -c .status "$m")"
	log "counters that moved during the run:"
	counters_delta before after | sed 's/^/     /'
	rc=0
	[ "$succeeded" = $SHARDS ] || { log "FAIL: the Job completed $succeeded of $SHARDS"; rc=1; }
	[ "$scheduled" = $expected ] || { log "FAIL: scheduled $scheduled, not the schedule's $expected"; rc=1; }
	# Every attempt written was read, unless the server closed its
	# connection first (wire.unanswered_closed, a reset) or never answered
	# (unanswered_silent): then attempts − those ≤ read ≤ attempts.
	read=$((after - before))
	if [ "$unanswered" = 0 ]; then
		[ "$read" = "$attempts" ] || { log "FAIL: the stub read $read, openload counts $attempts attempts"; rc=1; }
	else
		log "$unanswered attempts got no answer: the stub may not have read them"
		[ "$read" -le "$attempts" ] && [ "$read" -ge $((attempts - unanswered)) ] ||
			{ log "FAIL: the stub read $read, outside openload's $((attempts - unanswered))…$attempts"; rc=1; }
	fi
	kc delete "$job" --wait=false >/dev/null 2>&1 || true
	return $rc
}

# check_deleted NAME [--partial]: shard 2's pod deleted while the run is
# on. The run must name the pod and the shard and never exit 130; without
# --partial it refuses the merge (exit 3), with it the merged result holds
# the other three shards and says which is missing.
check_deleted() {
	local name=$1 partial=${2:-} rc=0 pod= start now i runner
	rm -f "$OUT/$name.json"
	"$OPENLOAD" k8s run --kubectl "$KUBECTL" --namespace "$NS" --image openload:dev --cpu "$SHARD_CPU" --memory 128Mi \
		--shards $SHARDS --keep ${partial:+"$partial"} -r "$RATE" -d "${DURATION}s" -c "$CONNS" -o "$OUT/$name.json" "$URL" \
		>"$OUT/$name.txt" 2>&1 &
	runner=$!
	# the runner ends with this check, whichever way it ends
	trap 'kill $runner 2>/dev/null || true' EXIT
	# this run's Job (the runner names it first), its shard 2's pod
	# running, then 40% into its schedule
	local job=
	for i in $(seq 240); do
		[ -n "$job" ] || job=$(sed -n 's/.*k8s run: job \([a-z0-9-]*\).*/\1/p' "$OUT/$name.txt" 2>/dev/null | head -1)
		[ -z "$job" ] || pod=$(kc get pods -l "batch.kubernetes.io/job-name=$job,batch.kubernetes.io/job-completion-index=2" \
			--field-selector=status.phase=Running -o name 2>/dev/null | head -1) || true
		[ -n "$pod" ] && break
		sleep 0.5
	done
	[ -n "$pod" ] || { log "FAIL: shard 2's pod of job ${job:-?} never ran"; return 1; }
	# the start: the runner's annotation once every pod runs, or a fixed START_AT
	for i in $(seq 120); do
		start=$(kc get "$pod" -o json | jq -r '.metadata.annotations["openload/start-at"] //
			([.spec.containers[0].env[]? | select(.name == "START_AT") | .value][0] | select(startswith("@") | not)) // empty')
		[ -n "$start" ] && break
		sleep 0.5
	done
	[ -n "$start" ] || { log "FAIL: $pod never got its start"; return 1; }
	start=$(date -d "$start" +%s)
	now=$(date +%s)
	i=$((start - now + DURATION * 2 / 5))
	[ $i -le 0 ] || sleep $i
	log "deleting $pod at $(date -u +%T), $((DURATION * 2 / 5)) s into the run's ${DURATION} s"
	kc delete "$pod" --wait=false >/dev/null
	rc=0
	wait $runner || rc=$?
	trap - EXIT
	if [ -n "$partial" ]; then
		sed 's/^/   /' "$OUT/$name.txt" | grep -v -e '│' -e '┌' -e '└' -e '├' || true
	else
		sed 's/^/   /' "$OUT/$name.txt"
	fi
	log "exit code $rc"
	local ok=0 podname=${pod#pod/}
	[ "$rc" != 130 ] || { log "FAIL: exit 130"; ok=1; }
	grep -q "$podname" "$OUT/$name.txt" || { log "FAIL: the output does not name $podname"; ok=1; }
	grep -q 'shard 2/4' "$OUT/$name.txt" || { log "FAIL: the output does not name shard 2/4"; ok=1; }
	if [ -z "$partial" ]; then
		[ "$rc" != 0 ] || { log "FAIL: exit 0 without shard 2"; ok=1; }
	else
		local sch want=$((RATE * DURATION * 3 / 4))
		sch=$(jq .counts.scheduled "$OUT/$name.json" 2>/dev/null) || sch=none
		log "--partial: merged scheduled $sch (three shards of four: $want)"
		[ "$sch" = "$want" ] || { log "FAIL: --partial merged $sch scheduled, not $want"; ok=1; }
	fi
	kc delete job "$job" --wait=false >/dev/null 2>&1 || true
	return $ok
}

# check_files: 3 shards with a targets file, a values CSV and a secret
# header, run as the runner's ServiceAccount bound to
# deploy/kubernetes/runner-role.yaml (kubectl --as): the Role is enough.
# The stub reads what the shards sent, the Job's spec holds no secret,
# and the run's ConfigMap and Secret are gone after. Then a scenarios
# file naming the same two files: the stub reads what the shards sent.
check_files() {
	local d=$OUT/files m=$OUT/files.json before after rc=0 job token=Bearer-e2e-$RANDOM$RANDOM
	mkdir -p "$d"
	printf 'GET %s?u={{csv.user}}\nX-Trace: {{seq}}\n' "$URL" >"$d/t.http"
	printf 'user\nann\nbob\ncid\n' >"$d/users.csv"
	kc apply -f "$REPO/deploy/kubernetes/runner-role.yaml" >/dev/null
	kc create rolebinding openload-runner-e2e --role openload-runner --serviceaccount "$NS:openload-runner" \
		--dry-run=client -o yaml | kc apply -f - >/dev/null
	printf '#!/bin/sh\nexec %s --as=system:serviceaccount:%s:openload-runner "$@"\n' "$KUBECTL" "$NS" >"$d/kubectl-as-runner"
	chmod +x "$d/kubectl-as-runner"
	before=$(stub_stats | jq .total)
	"$OPENLOAD" k8s run --kubectl "$d/kubectl-as-runner" --namespace "$NS" --image openload:dev \
		--cpu "$SHARD_CPU" --memory 128Mi --shards 3 --keep -o "$m" -r "$RATE" -d "${DURATION}s" -c "$CONNS" \
		--targets "$d/t.http" --values "$d/users.csv" -H "Authorization: $token" >"$OUT/files.txt" 2>&1 || rc=$?
	sleep 1
	after=$(stub_stats | jq .total)
	sed 's/^/   /' "$OUT/files.txt"
	[ $rc = 0 ] || { log "FAIL: openload k8s run exited $rc"; return 1; }
	job=$(sed -n 's/.*k8s run: job \([a-z0-9-]*\).*/\1/p' "$OUT/files.txt" | head -1)
	rc=0
	log "stub read $((after - before)); merged attempts $(jq '.wire.attempts // .counts.sent' "$m")"
	[ $((after - before)) = "$(jq '.wire.attempts // .counts.sent' "$m")" ] || { log "FAIL: the stub's count differs"; rc=1; }
	if kc get job "$job" -o yaml | grep -q "$token"; then log "FAIL: the Job's spec holds the secret"; rc=1; fi
	kc delete job "$job" --wait=false >/dev/null 2>&1 || true
	# a scenarios file naming the same files: carried with them, its paths rewritten
	printf 'scenarios:\n  - name: mix\n    rate: %s\n    targets: %s\n    values: [%s]\n' "$RATE" "$d/t.http" "$d/users.csv" >"$d/mix.yaml"
	before=$(stub_stats | jq .total)
	"$OPENLOAD" k8s run --kubectl "$d/kubectl-as-runner" --namespace "$NS" --image openload:dev --cpu "$SHARD_CPU" --memory 128Mi \
		--shards 3 -o "$OUT/files-mix.json" -d "${DURATION}s" -c "$CONNS" --scenarios "$d/mix.yaml" >"$OUT/files-mix.txt" 2>&1 ||
		{ log "FAIL: k8s run --scenarios exited $?"; rc=1; }
	sleep 1
	after=$(stub_stats | jq .total)
	log "scenarios: stub read $((after - before)); merged attempts $(jq '.wire.attempts // .counts.sent' "$OUT/files-mix.json")"
	[ $((after - before)) = "$(jq '.wire.attempts // .counts.sent' "$OUT/files-mix.json")" ] || { log "FAIL: scenarios: the stub's count differs"; rc=1; }
	# --keep kept them; without it the runner deletes by the run's label
	"$OPENLOAD" k8s run --kubectl "$d/kubectl-as-runner" --namespace "$NS" --image openload:dev \
		--cpu "$SHARD_CPU" --memory 128Mi --shards 3 -r 10 -d 2s --lead 20s \
		--values "$d/users.csv" -H "X-User: {{csv.user}}" -H "Authorization: $token" "$URL" >"$OUT/files-2.txt" 2>&1 || true
	job=$(sed -n 's/.*k8s run: job \([a-z0-9-]*\).*/\1/p' "$OUT/files-2.txt" | head -1)
	local left
	left=$(kc get configmap,secret -l "openload.dev/run=$job" -o name 2>/dev/null)
	[ -z "$left" ] || { log "FAIL: left after the run: $left"; rc=1; }
	kc delete configmap,secret -l "openload.dev/run" --wait=false >/dev/null 2>&1 || true
	kc delete rolebinding openload-runner-e2e --ignore-not-found >/dev/null
	return $rc
}

# check_detach: `k8s run --detach` prints the Job's name and exits 0 at
# once; `k8s collect NAME` then merges the same counts as a followed run:
# scheduled = rate × duration, and the stub read every attempt.
check_detach() {
	local job rc=0 m=$OUT/detach.json before after t0 t1 read attempts scheduled
	before=$(stub_stats | jq .total)
	t0=$(date +%s)
	job=$(k8s_run_stdout detach --detach --shards $SHARDS -r "$RATE" -d "${DURATION}s" -c "$CONNS" "$URL") || rc=$?
	t1=$(date +%s)
	sed 's/^/   /' "$OUT/detach.txt"
	[ $rc = 0 ] && [ -n "$job" ] || { log "FAIL: --detach exited $rc, printed '${job}'"; return 1; }
	log "--detach: job $job, back in $((t1 - t0)) s"
	"$OPENLOAD" k8s status "$job" --kubectl "$KUBECTL" --namespace "$NS" | sed 's/^/   /' || true
	"$OPENLOAD" k8s collect "$job" --kubectl "$KUBECTL" --namespace "$NS" -o "$m" >"$OUT/collect.txt" 2>&1 || rc=$?
	sleep 1
	after=$(stub_stats | jq .total)
	sed 's/^/   /' "$OUT/collect.txt" | grep -v -e '│' -e '┌' -e '└' -e '├' || true
	[ $rc = 0 ] || { log "FAIL: collect exited $rc"; return 1; }
	scheduled=$(jq .counts.scheduled "$m")
	attempts=$(jq '.wire.attempts // .counts.sent' "$m")
	read=$((after - before))
	log "collect: scheduled $scheduled (want $((RATE * DURATION))), attempts $attempts, the stub read $read"
	rc=0
	[ "$scheduled" = $((RATE * DURATION)) ] || { log "FAIL: collect merged $scheduled scheduled"; rc=1; }
	[ "$read" = "$attempts" ] || { log "FAIL: the stub read $read, collect counts $attempts attempts"; rc=1; }
	kc get job "$job" >/dev/null 2>&1 && { log "FAIL: collect left job $job"; rc=1; }
	return $rc
}

# check_start: without --lead the shards start once every pod runs: a
# ${DURATION} s run (pods' image on the node already) ends within its
# duration + drain + 10 s, not the 30 s lead more it took before.
check_start() {
	local rc=0 t0 t1 drain=2 m=$OUT/start.json
	t0=$(date +%s)
	k8s_run start --shards $SHARDS -r "$RATE" -d "${DURATION}s" -c "$CONNS" --drain "${drain}s" -o "$m" "$URL" || rc=$?
	t1=$(date +%s)
	sed 's/^/   /' "$OUT/start.txt" | grep -v -e '│' -e '┌' -e '└' -e '├' || true
	log "exit $rc after $((t1 - t0)) s: ${DURATION} s run + ${drain} s drain + 10 s allows $((DURATION + drain + 10)) s"
	[ $rc = 0 ] || { log "FAIL: exit $rc"; return 1; }
	grep -q 'all [0-9]* pods running .* starting at' "$OUT/start.txt" || { log "FAIL: the start was not set on readiness"; rc=1; }
	[ $((t1 - t0)) -le $((DURATION + drain + 10)) ] || { log "FAIL: $((t1 - t0)) s end to end"; rc=1; }
	[ "$(jq .counts.scheduled "$m")" = $((RATE * DURATION)) ] || { log "FAIL: scheduled $(jq .counts.scheduled "$m")"; rc=1; }
	return $rc
}

# k8s_run_stdout OUTNAME ARGS...: k8s_run with stdout alone on stdout,
# stderr in $OUT/OUTNAME.txt.
k8s_run_stdout() {
	local name=$1
	shift
	"$OPENLOAD" k8s run --kubectl "$KUBECTL" --namespace "$NS" --image openload:dev \
		--cpu "$SHARD_CPU" --memory 128Mi "$@" 2>"$OUT/$name.txt"
}

# check_pull: an image no node can pull stops the run in seconds (exit 3,
# the kubelet's reason said), not after the lead and the grace.
check_pull() {
	local rc=0 t0 t1
	t0=$(date +%s)
	"$OPENLOAD" k8s run --kubectl "$KUBECTL" --namespace "$NS" --image registry.invalid/openload:none \
		--image-pull-policy Always --cpu "$SHARD_CPU" --memory 128Mi --shards 2 -r 10 -d 5s "$URL" \
		>"$OUT/pull.txt" 2>&1 || rc=$?
	t1=$(date +%s)
	sed 's/^/   /' "$OUT/pull.txt"
	log "exit $rc after $((t1 - t0)) s"
	[ $rc = 3 ] || { log "FAIL: exit $rc, want 3"; return 1; }
	grep -q 'cannot pull the image: \(ErrImagePull\|ImagePullBackOff\)' "$OUT/pull.txt" || { log "FAIL: the reason is not said"; return 1; }
	# under the default --lead (30 s): it did not wait for the start
	[ $((t1 - t0)) -lt 30 ] || { log "FAIL: $((t1 - t0)) s: it waited"; return 1; }
}

do_test() {
	FAILED=()
	kc get ns "$NS" >/dev/null 2>&1 || kc create ns "$NS" >/dev/null
	# The restricted Pod Security level, as the README says the manifests meet
	kc label --overwrite ns "$NS" pod-security.kubernetes.io/enforce=restricted >/dev/null
	kc wait --for=create serviceaccount/default --timeout=30s >/dev/null
	check "manifests (dry-run=server)" check_manifests
	check "stub up" check_stub
	check "4 shards: Job, counts, stub" check_run
	check "a deleted shard pod" check_deleted run-deleted
	check "a deleted shard pod, --partial" check_deleted run-partial --partial
	check "files, a secret header, the runner's Role" check_files
	check "--detach, then collect" check_detach
	check "a ${DURATION} s run starts on readiness" check_start
	check "an image no node can pull" check_pull
	if [ ${#FAILED[@]} = 0 ]; then
		echo "e2e: all checks passed"
	else
		echo "e2e: FAILED: ${FAILED[*]}"
		return 1
	fi
}

# ---------------------------------------------------------------- down

# Every step below is safe to run again and on a cluster half up: down
# is the EXIT trap of `all` and can be run by hand after anything.

# The pods first, through the kubelet, so that each sandbox's network is
# taken down by its CNI DEL (veth, address, masquerade rule).
down_pods() {
	alive kube-apiserver >/dev/null && alive kubelet >/dev/null || return 0
	stop kube-controller-manager # no controller recreates what is deleted
	stop kube-scheduler
	kc delete pods --all --all-namespaces --grace-period=2 --wait=true --timeout=60s >/dev/null 2>&1 ||
		log "pods: not all deleted within 60 s"
	local i
	for i in $(seq 60); do # the kubelet stops the sandboxes after the pods are gone
		[ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break
		sleep 0.5
	done
}

# What the kubelet left: containers killed and removed through containerd,
# their network namespaces deleted.
down_containers() {
	alive containerd >/dev/null || return 0
	local id
	for id in $(ctr_ tasks ls -q 2>/dev/null); do
		ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
	done
	sleep 0.5
	for id in $(ctr_ tasks ls -q 2>/dev/null); do
		ctr_ tasks rm -f "$id" >/dev/null 2>&1 || true
	done
	for id in $(ctr_ containers ls -q 2>/dev/null); do
		ctr_ containers rm "$id" >/dev/null 2>&1 || true
	done
}

# Processes still in the pods' cgroups, and containerd's shims for this
# containerd (found by its socket in their command line), by PID.
down_strays() {
	local pids=() p
	for p in $(find /sys/fs/cgroup/*/"$NODE" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un); do
		pids+=("$p")
	done
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = /usr/bin/containerd-shim-runc-v2 ] || continue
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "-address $RUNDIR/containerd/containerd.sock" &&
			pids+=("${p#/proc/}")
	done
	[ ${#pids[@]} = 0 ] && return
	log "SIGKILL left-over pids: ${pids[*]}"
	kill -KILL "${pids[@]}" 2>/dev/null || true
	sleep 0.5
}

down_cgroups() {
	local c d
	for c in /sys/fs/cgroup/*/; do
		[ -d "$c$NODE" ] || continue
		# deepest first
		find "$c$NODE" -depth -type d -print0 2>/dev/null | xargs -0r rmdir 2>/dev/null || true
		[ -d "$c$NODE" ] && log "cgroup $c$NODE: not removed: $(cat "$c$NODE"/cgroup.procs 2>/dev/null | tr '\n' ' ')"
	done
	return 0
}

down_mounts() {
	local m before=
	[ -s "$BEFORE/netns" ] && before=$(cat "$BEFORE/netns")
	for m in /run/netns/cni-*; do
		[ -e "$m" ] || continue
		grep -qx "$(basename "$m")" <<<"$before" && continue
		ip netns delete "$(basename "$m")" 2>/dev/null || { umount -l "$m" 2>/dev/null; rm -f "$m"; }
	done
	# everything mounted under the state directories, deepest first
	awk -v a="$STATE/" -v b="$RUNDIR/" 'index($5, a) == 1 || index($5, b) == 1 { print length($5), $5 }' \
		/proc/self/mountinfo | sort -rn | cut -d' ' -f2- | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "mount $m: not unmounted"
	done
}

down_network() {
	local l
	# veths still on the bridge (their pod's namespace was deleted first
	# or not at all), then the bridge
	for l in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{ print $2 }' | sed 's/@.*//'); do
		ip link delete "$l" 2>/dev/null || true
	done
	if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link delete "$BRIDGE" || true; fi
	down_iptables iptables
	down_iptables ip6tables
	down_nft
}

# The nftables tables that iptables-nft made for the rules above (ip nat,
# ip6 filter...), and kube-proxy's own, if they were not there before and
# hold no rule now.
down_nft() {
	local fam name
	command -v nft >/dev/null && [ -e "$BEFORE/nft" ] || return 0
	nft list tables 2>/dev/null | while read -r _ fam name; do
		grep -qx "table $fam $name" "$BEFORE/nft" && continue
		# a rule's line ends with its handle; tables' and chains' lines open a brace
		nft -a list table "$fam" "$name" 2>/dev/null | grep '# handle' | grep -qv '{' && continue
		nft delete table "$fam" "$name" 2>/dev/null || true
	done
}

# down_iptables iptables|ip6tables: remove the rules and chains that are
# there now and were not before up (kube-proxy's KUBE-*, the bridge's
# CNI-*, the kubelet's KUBE-FIREWALL...), whoever added them.
down_iptables() {
	local cmd=$1 before=$BEFORE/$1 now table line
	[ -e "$before" ] && command -v "$cmd-save" >/dev/null || return 0
	now=$("$cmd-save" 2>/dev/null) || return 0
	table=
	while IFS= read -r line; do
		case $line in
		\**) table=${line#\*} ;;
		-A\ *)
			grep -qxF -- "$line" "$before" && continue
			eval "$cmd -t $table -D ${line#-A }" 2>/dev/null || true
			;;
		esac
	done <<<"$now"
	while IFS= read -r line; do
		case $line in
		\**) table=${line#\*} ;;
		:*)
			local chain=${line#:}
			chain=${chain%% *}
			grep -q "^:$chain " "$before" && continue
			"$cmd" -t "$table" -F "$chain" 2>/dev/null || true
			;;
		esac
	done <<<"$now"
	while IFS= read -r line; do
		case $line in
		\**) table=${line#\*} ;;
		:*)
			local chain=${line#:}
			chain=${chain%% *}
			grep -q "^:$chain " "$before" && continue
			"$cmd" -t "$table" -X "$chain" 2>/dev/null || true
			;;
		esac
	done <<<"$now"
}

down_sysctls() {
	local k v cur
	[ -s "$BEFORE/sysctl" ] || return 0
	while IFS=$'\t' read -r k v; do
		cur=$(sysctl -n "$k" 2>/dev/null) || continue
		[ "$cur" = "$v" ] || { sysctl -qw "$k=$v" && log "sysctl $k: $cur → $v" || true; }
	done <"$BEFORE/sysctl"
}

down_paths() {
	local p
	[ -e "$BEFORE/done" ] || return 0 # no record of before: leave everything
	rm -f /var/lib/cni/results/openload-e2e-* 2>/dev/null || true
	for p in "${OUTSIDE[@]}"; do
		[ -e "$p" ] || continue
		grep -qx "$p" "$BEFORE/paths" 2>/dev/null && continue
		rm -rf "$p"
		log "removed $p (made by the cluster)"
	done
}

# What is left that should not be: printed, and down fails.
down_check() {
	local bad=0 n p
	for n in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy; do
		p=$(alive $n) && { log "still running: $n (pid $p)"; bad=1; }
	done
	ip link show "$BRIDGE" >/dev/null 2>&1 && { log "still there: $BRIDGE"; bad=1; }
	ls -d /sys/fs/cgroup/*/"$NODE" 2>/dev/null | grep -q . && { log "still there: cgroups /$NODE"; bad=1; }
	grep -qE " ($STATE|$RUNDIR)/" /proc/self/mountinfo && { log "still mounted under $STATE or $RUNDIR"; bad=1; }
	local t
	for t in iptables ip6tables; do
		[ -e "$BEFORE/$t" ] || continue
		if diff <(grep -v '^#' "$BEFORE/$t" | sed 's/\[[0-9:]*\]//') \
			<($t-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9:]*\]//') >"$OUT/$t.diff"; then
			log "$t: as before up"
		else
			log "$t: differs from before up ($OUT/$t.diff)"
		fi
	done
	if [ -e "$BEFORE/nft" ] && command -v nft >/dev/null; then
		diff "$BEFORE/nft" <(nft list tables 2>/dev/null) >"$OUT/nft.diff" &&
			log "nftables tables: as before up" || log "nftables tables: differ from before up ($OUT/nft.diff)"
	fi
	return $bad
}

do_down() {
	down_pods
	stop kube-proxy
	if [ -x "$K8S_BIN/kube-proxy" ] && [ -e "$BEFORE/done" ]; then
		"$K8S_BIN/kube-proxy" --cleanup >"$LOG/kube-proxy-cleanup.log" 2>&1 || true
	fi
	stop kubelet
	down_containers
	stop containerd
	down_strays
	stop kube-controller-manager
	stop kube-scheduler
	stop kube-apiserver
	stop etcd
	down_cgroups
	down_mounts
	down_network
	down_sysctls
	down_paths
	down_check || return 1
	rm -rf "$STATE" "$RUNDIR"
}

# ---------------------------------------------------------------- main

do_all() {
	T0=$(now)
	if [ "${OPENLOAD_E2E_KEEP:-}" != 1 ]; then
		trap 'rc=$?; stage down do_down || rc=1; summary; exit $rc' EXIT
	else
		trap 'rc=$?; summary; echo "e2e: the cluster is up: $0 down removes it"; exit $rc' EXIT
	fi
	stage install do_install
	do_build
	do_up
	do_test
}

summary() {
	echo "== timings (also in $TIMINGS)"
	cat "$TIMINGS"
	printf '%-36s %7.1f s\n' total "$(awk -v a="$T0" -v b="$(now)" 'BEGIN { print b - a }')" | tee -a "$TIMINGS"
}

main() {
	[ "$(id -u)" = 0 ] || die "needs root (it starts a kubelet, containerd, kube-proxy)"
	mkdir -p "$OUT" "$LOG"
	local cmd=${1:-all}
	case $cmd in
	all) : >"$TIMINGS"; do_all ;;
	install) stage install do_install ;;
	build) do_build ;;
	up) do_up ;;
	test) do_test ;;
	down) stage down do_down ;;
	env) echo "export KUBECONFIG=$KUBECONFIG" ;;
	*) die "unknown command: $cmd (all, install, build, up, test, down, env)" ;;
	esac
}

main "$@"
