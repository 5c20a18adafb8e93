// Command etcd runs the pinned etcd server; Debian's etcd is too old for a current kube-apiserver.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
