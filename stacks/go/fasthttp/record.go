// record.go owns the fixture record type; record_gen.go holds its generated MessagePack codec.
package main

//go:generate go tool msgp -file record.go -o record_gen.go -tests=false

// Record is one fixture record; field order gives the canonical JSON key order, the msg tags the
// MessagePack map keys that tinylib/msgp's generated decoder matches.
type Record struct {
	ID          int64   `json:"id" msg:"id"`
	Name        string  `json:"name" msg:"name"`
	Description string  `json:"description" msg:"description"`
	Type        string  `json:"type" msg:"type"`
	Count       int64   `json:"count" msg:"count"`
	CreatedAt   float64 `json:"created_at" msg:"created_at"`
}
