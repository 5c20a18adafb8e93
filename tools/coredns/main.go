// Command coredns is CoreDNS with only the plugins a cluster DNS needs, the management environment's real node's DNS:
// pods resolve Service names (NATS, the conversion webhook) as in any Kubernetes cluster. Built here, from the pinned
// module, because no registry can be reached; the full plugin set would pull every cloud provider's SDK.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The plugins' order of execution, as in CoreDNS's plugin.cfg.
func init() {
	dnsserver.Directives = []string{"ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes"}
}

func main() {
	coremain.Run()
}
