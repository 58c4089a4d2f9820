//go:build goexperiment.jsonv2

package main

// jsonImplementation names the encoding/json this process runs: the direct
// side decodes Weaviate's answers with it, so it must be queryd's
// (deploy/localstack.GoExperiment) for the two sides to compare.
const jsonImplementation = "encoding/json on json/v2 (GOEXPERIMENT=jsonv2), as queryd"
