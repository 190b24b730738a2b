// Package main owns the {{stack}} stack: a net/http server answering the hello scenario.
package main

import (
	"log"
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
	// Loopback only: a benchmark never opens a port to the network.
	addr := "127.0.0.1:" + os.Getenv("PORT")
	log.Printf("{{stack}} listening on %s with GOMAXPROCS=%d", addr, runtime.GOMAXPROCS(0))
	log.Fatal(http.ListenAndServe(addr, mux))
}
