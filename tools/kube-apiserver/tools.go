//go:build tools

// Package tools pins the kube-apiserver and kube-controller-manager commands so `go mod tidy` keeps their
// dependency graph.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
