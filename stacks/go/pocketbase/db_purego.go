// db_purego.go owns the SQLite driver choice of the default (pure Go, CGO_ENABLED=0) build.

//go:build !no_default_driver

package main

import "github.com/pocketbase/pocketbase/core"

// nil keeps PocketBase's default connection: modernc.org/sqlite, pure Go.
var dbConnect core.DBConnectFunc

// modernc.org/sqlite registers itself as "sqlite" (imported by PocketBase's core).
const fixtureDriver = "sqlite"

const driverName = "modernc.org/sqlite (pure Go)"
