//go:build tools

// Package tools pins the kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl commands
// so `go mod tidy` keeps their dependency graph (the kubelet and kube-proxy make the management environment's real node;
// the dashboard's browser tests use a downloaded kubeconfig with kubectl).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
