// Command pause holds a pod's namespaces open for containerd's CRI plugin (its sandbox_image), as the Kubernetes pause
// container does: it sleeps until SIGINT or SIGTERM and, as PID 1 of the pod, reaps orphaned children. Built here
// because no registry can be reached for registry.k8s.io/pause.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
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
