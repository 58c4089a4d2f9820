//go:build !goexperiment.jsonv2

package main

// jsonImplementation: see json_v2.go. Without the experiment the direct
// side decodes JSON slower than queryd does, which flatters queryd.
const jsonImplementation = "encoding/json v1 (GOEXPERIMENT=jsonv2 not set: the direct side decodes slower than queryd; run through go tool task)"
