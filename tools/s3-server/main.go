// Command s3-server runs an S3-compatible object store for the test environment: rclone's gofakes3 (the server
// behind `rclone serve s3`) with an in-memory backend. Requests must carry an AWS Signature V4 made with the key
// pair given in S3_ACCESS_KEY / S3_SECRET_KEY (the environment, so the secret never shows in a process list).
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rclone/gofakes3"
	"github.com/rclone/gofakes3/s3mem"
)

type bucketList []string

func (b *bucketList) String() string     { return strings.Join(*b, ",") }
func (b *bucketList) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	address := flag.String("address", "127.0.0.1:0", "where to listen (host:port)")
	certFile := flag.String("tls-cert", "", "serving certificate (PEM); unset: plain HTTP")
	keyFile := flag.String("tls-key", "", "serving key (PEM)")
	var buckets bucketList
	flag.Var(&buckets, "bucket", "a bucket to create at start (repeatable)")
	flag.Parse()

	accessKey, secretKey := os.Getenv("S3_ACCESS_KEY"), os.Getenv("S3_SECRET_KEY")
	if accessKey == "" || secretKey == "" {
		fmt.Fprintln(os.Stderr, "s3-server: S3_ACCESS_KEY and S3_SECRET_KEY are required")
		os.Exit(2)
	}
	backend := s3mem.New()
	for _, bucket := range buckets {
		if err := backend.CreateBucket(context.Background(), bucket); err != nil {
			fmt.Fprintf(os.Stderr, "s3-server: creating bucket %s: %v\n", bucket, err)
			os.Exit(1)
		}
	}
	faker := gofakes3.New(backend, gofakes3.WithV4Auth(map[string]string{accessKey: secretKey}))

	listener, err := net.Listen("tcp", *address)
	if err != nil {
		fmt.Fprintf(os.Stderr, "s3-server: %v\n", err)
		os.Exit(1)
	}
	server := &http.Server{Handler: faker.Server(), ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if *certFile != "" {
		certificate, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "s3-server: %v\n", err)
			os.Exit(1)
		}
		server.TLSConfig = &tls.Config{Certificates: []tls.Certificate{certificate}, MinVersion: tls.VersionTLS12}
		listener = tls.NewListener(listener, server.TLSConfig)
		scheme = "https"
	}
	// The one line the test environment reads: where the server listens.
	fmt.Printf("listening on %s://%s\n", scheme, listener.Addr().String())

	go func() {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
		<-signals
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(ctx)
	}()
	if err := server.Serve(listener); err != nil && err != http.ErrServerClosed {
		fmt.Fprintf(os.Stderr, "s3-server: %v\n", err)
		os.Exit(1)
	}
}
