// Command pause is the e2e cluster's pod sandbox: the process that holds a
// pod's namespaces while its containers come and go. It waits for SIGTERM
// or SIGINT and exits 0, and reaps the zombies it inherits when the pod
// shares one PID namespace. The cluster has no registry to pull
// registry.k8s.io/pause from, so run.sh builds this into an image of its own.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
