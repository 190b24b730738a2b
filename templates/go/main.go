// Package main owns the {{stack}} stack: a net/http server answering the hello scenario.
package main

import (
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
)

var helloBody = []byte("Hello World!")

func hello(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write(helloBody)
}

func main() {
	mux := http.NewServeMux()
	// "/{$}" matches "/" alone; every other path gets net/http's 404.
	mux.HandleFunc("GET /{$}", hello)
	// HOST is the address to bind: 127.0.0.1, or the server host's own address when the lab places
	// the server on a host of its own. Never 0.0.0.0: a benchmark never opens a port to the network.
	host := os.Getenv("HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, os.Getenv("PORT"))
	log.Printf("{{stack}} listening on %s with GOMAXPROCS=%d", addr, runtime.GOMAXPROCS(0))
	log.Fatal(http.ListenAndServe(addr, mux))
}
