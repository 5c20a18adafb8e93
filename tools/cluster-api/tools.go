//go:build tools

// Package tools pins upstream Cluster API's managers and clusterctl, built for the compatibility suite and the
// side-by-side benchmark.
package tools

import (
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
	_ "sigs.k8s.io/cluster-api/controlplane/kubeadm"
	_ "sigs.k8s.io/cluster-api/core"
	_ "sigs.k8s.io/cluster-api/test/infrastructure/docker"
)
