//go:build tools

// Package tools pins the kube-apiserver, kube-controller-manager and kube-scheduler commands so `go mod tidy` keeps their
// dependency graph.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
