module github.com/strata-kb/strata/embedder

go 1.26.8

replace github.com/strata-kb/strata/shared => ../shared

require (
	github.com/nats-io/nats.go v1.55.0
	github.com/strata-kb/strata/shared v0.0.0-00010101000000-000000000000
)

require (
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
