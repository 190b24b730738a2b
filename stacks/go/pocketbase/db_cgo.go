// db_cgo.go owns the SQLite driver choice of the cgo build: mattn/go-sqlite3 (C SQLite) instead of modernc.

//go:build no_default_driver

package main

import (
	"database/sql"

	"github.com/mattn/go-sqlite3"
	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// PocketBase's documented way to switch drivers: build with the no_default_driver tag (so modernc
// is not linked) and pass Config.DBConnect. The ConnectHook sets the same PRAGMAs as PocketBase's
// default connection (core.DefaultDBConnect).
func init() {
	sql.Register("pb_sqlite3", &sqlite3.SQLiteDriver{
		ConnectHook: func(conn *sqlite3.SQLiteConn) error {
			_, err := conn.Exec(`
				PRAGMA busy_timeout       = 10000;
				PRAGMA journal_mode       = WAL;
				PRAGMA journal_size_limit = 200000000;
				PRAGMA synchronous        = NORMAL;
				PRAGMA foreign_keys       = ON;
				PRAGMA temp_store         = MEMORY;
				PRAGMA cache_size         = -32000;
			`, nil)
			return err
		},
	})
	dbx.BuilderFuncMap["pb_sqlite3"] = dbx.BuilderFuncMap["sqlite3"]
}

var dbConnect core.DBConnectFunc = func(dbPath string) (*dbx.DB, error) {
	return dbx.Open("pb_sqlite3", dbPath)
}

// mattn/go-sqlite3 registers itself as "sqlite3".
const fixtureDriver = "sqlite3"

const driverName = "mattn/go-sqlite3 (cgo, C SQLite)"
