package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/google/uuid"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/servers"
)

// The compression experiment (-recall-vectors N): the same N vectors in two
// named vectors of one collection, one HNSW index uncompressed and one with
// 8-bit rotational quantization (RQ, what schema.VectorCompression turns
// on), searched with the same queries; recall@10 of each against the exact
// top 10 (brute force in this process), and of RQ against uncompressed.
//
// The vectors: the model-embedded sample (real use-lite-512 vectors) as
// cluster centres, each point a centre plus Gaussian noise, renormalised,
// so neighbourhoods mean something (uniform random 512-d vectors are all
// about equally far apart, where recall says little). Queries are other
// points drawn the same way.

const recallClass = "StrataRecallProbe"

// recallNoise is the noise per dimension around a cluster centre: a noise
// vector of length about 1.1, as long as the centre itself, so clusters
// overlap and the nearest ten are not simply one cluster's members.
const recallNoise = 0.05

type recallResult struct {
	Vectors, Queries        int
	PlainRecall, RQRecall   float64 // against the exact top 10
	RQvsPlain               float64 // overlap of RQ's top 10 with uncompressed HNSW's
	PlainP50, RQP50         time.Duration
	Insert, IndexPlainAndRQ time.Duration
	RQConfig                string // as Weaviate reports it
}

func runRecall(ctx context.Context, cfg Config, st *localstack.Stack, centres [][]float32, progress func(string, ...any)) (recallResult, error) {
	res := recallResult{Vectors: cfg.RecallVectors, Queries: 200}
	wv, err := schema.NewClient(st.Servers.WeaviateHost, st.Servers.WeaviateGRPCHost, servers.LocalWeaviateWriter)
	if err != nil {
		return res, err
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xbeef))
	point := func() []float32 {
		c := centres[rng.IntN(len(centres))]
		v := make([]float32, len(c))
		var norm float64
		for i := range v {
			v[i] = c[i] + float32(rng.NormFloat64()*recallNoise)
			norm += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(norm))
		}
		return v
	}
	_ = wv.Schema().ClassDeleter().WithClassName(recallClass).Do(ctx)
	class := &models.Class{Class: recallClass, Properties: []*models.Property{{Name: "n", DataType: []string{"int"}}},
		VectorConfig: map[string]models.VectorConfig{
			"plain": {Vectorizer: map[string]any{"none": map[string]any{}}, VectorIndexType: "hnsw", VectorIndexConfig: map[string]any{"distance": "cosine"}},
			"rq":    {Vectorizer: map[string]any{"none": map[string]any{}}, VectorIndexType: "hnsw", VectorIndexConfig: schema.CompressedIndexConfig()},
		}}
	if err := wv.Schema().ClassCreator().WithClass(class).Do(ctx); err != nil {
		return res, fmt.Errorf("create %s: %w", recallClass, err)
	}
	have, err := wv.Schema().ClassGetter().WithClassName(recallClass).Do(ctx)
	if err != nil {
		return res, fmt.Errorf("read %s: %w", recallClass, err)
	}
	if rq, _ := have.VectorConfig["rq"].VectorIndexConfig.(map[string]any)["rq"].(map[string]any); rq["enabled"] != true {
		return res, fmt.Errorf("weaviate did not enable RQ on the probe: %v", have.VectorConfig["rq"].VectorIndexConfig)
	} else {
		res.RQConfig = fmt.Sprint(rq)
	}
	defer func() { _ = wv.Schema().ClassDeleter().WithClassName(recallClass).Do(context.Background()) }()

	data := make([][]float32, cfg.RecallVectors)
	t0 := time.Now()
	for start := 0; start < len(data); start += 500 {
		var objs []*models.Object
		for i := start; i < min(start+500, len(data)); i++ {
			data[i] = point()
			objs = append(objs, &models.Object{Class: recallClass, ID: strfmt.UUID(uuid.NewSHA1(uuid.NameSpaceOID, fmt.Append(nil, i)).String()),
				Properties: map[string]any{"n": i}, Vectors: models.Vectors{"plain": models.Vector(data[i]), "rq": models.Vector(data[i])}})
		}
		if _, err := wv.Batch().ObjectsBatcher().WithObjects(objs...).Do(ctx); err != nil {
			return res, fmt.Errorf("insert probe vectors: %w", err)
		}
	}
	res.Insert = time.Since(t0)
	if err := waitVectorQueue(ctx, st); err != nil {
		return res, err
	}
	res.IndexPlainAndRQ = time.Since(t0) - res.Insert
	progress("recall: %d vectors stored in %s, indexed twice (plain and RQ) %s later", len(data), res.Insert.Round(time.Second), res.IndexPlainAndRQ.Round(time.Second))

	var plainHits, rqHits, overlap float64
	var plainLat, rqLat []time.Duration
	for range res.Queries {
		q := point()
		exact := exactTop(data, q, 10)
		p, dp, err := searchProbe(ctx, wv, "plain", q)
		if err != nil {
			return res, err
		}
		r, dr, err := searchProbe(ctx, wv, "rq", q)
		if err != nil {
			return res, err
		}
		plainLat, rqLat = append(plainLat, dp), append(rqLat, dr)
		plainHits += float64(common(p, exact)) / 10
		rqHits += float64(common(r, exact)) / 10
		overlap += float64(common(r, p)) / float64(max(1, len(p)))
	}
	n := float64(res.Queries)
	res.PlainRecall, res.RQRecall, res.RQvsPlain = plainHits/n, rqHits/n, overlap/n
	slices.Sort(plainLat)
	slices.Sort(rqLat)
	res.PlainP50, res.RQP50 = plainLat[len(plainLat)/2], rqLat[len(rqLat)/2]
	return res, nil
}

func searchProbe(ctx context.Context, wv *weaviate.Client, vector string, q []float32) ([]int, time.Duration, error) {
	t0 := time.Now()
	resp, err := wv.GraphQL().Get().WithClassName(recallClass).WithFields(graphql.Field{Name: "n"}).
		WithNearVector((&graphql.NearVectorArgumentBuilder{}).WithVector(q).WithTargetVectors(vector)).WithLimit(10).Do(ctx)
	took := time.Since(t0)
	if err != nil {
		return nil, 0, fmt.Errorf("search %s: %w", vector, err)
	}
	if len(resp.Errors) > 0 {
		return nil, 0, fmt.Errorf("search %s: %s", vector, resp.Errors[0].Message)
	}
	var out []int
	for _, row := range resp.Data["Get"].(map[string]any)[recallClass].([]any) {
		f, _ := row.(map[string]any)["n"].(float64)
		out = append(out, int(f))
	}
	return out, took, nil
}

// exactTop is the brute-force top k by cosine (vectors are unit length).
func exactTop(data [][]float32, q []float32, k int) []int {
	type hit struct {
		i int
		s float32
	}
	hits := make([]hit, len(data))
	for i, v := range data {
		var dot float32
		for j := range v {
			dot += v[j] * q[j]
		}
		hits[i] = hit{i, dot}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].s > hits[b].s })
	out := make([]int, k)
	for i := range out {
		out[i] = hits[i].i
	}
	return out
}

func common(a, b []int) int {
	n := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			n++
		}
	}
	return n
}

func writeRecall(path string, cfg Config, r recallResult) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Vector compression: recall@10 of 8-bit RQ against uncompressed HNSW\n\n")
	fmt.Fprintf(&b, "Written by `go run ./deploy/cmd/strata-bench %s` on %s (%s).\n\n", strings.Join(cfg.args, " "), time.Now().UTC().Format("2006-01-02 15:04 MST"), servers.Weaviate.Name+" "+servers.Weaviate.Version)
	fmt.Fprintf(&b, "%d vectors of 512 dimensions (clusters around %d real use-lite-512 embeddings, Gaussian noise %.2f per dimension, unit length), stored once in two named vectors of one collection: `plain` (HNSW, cosine) and `rq` (HNSW, cosine, 8-bit rotational quantization: `schema.CompressedIndexConfig`; Weaviate reports rq %s). %d queries drawn the same way; the exact top 10 is computed by brute force.\n\n", r.Vectors, cfg.RealVectors, recallNoise, r.RQConfig, r.Queries)
	fmt.Fprintf(&b, "| index | recall@10 vs exact | p50 query |\n|---|---:|---:|\n| uncompressed HNSW | %.3f | %s ms |\n| 8-bit RQ HNSW | %.3f | %s ms |\n\n", r.PlainRecall, ms(r.PlainP50), r.RQRecall, ms(r.RQP50))
	fmt.Fprintf(&b, "Overlap of RQ's top 10 with uncompressed HNSW's top 10 on the same queries: %.3f.\n", r.RQvsPlain)
	fmt.Fprintf(&b, "Insert %s; both indexes built %s after that (asynchronous indexing).\n", r.Insert.Round(time.Millisecond), r.IndexPlainAndRQ.Round(time.Millisecond))
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
