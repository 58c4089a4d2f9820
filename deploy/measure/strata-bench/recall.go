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
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/wvquery"
)

// The compression experiment (-recall-vectors N): the same N vectors in one
// collection per HNSW variant (uncompressed, 8-bit rotational quantization
// (RQ) with Weaviate's build defaults, and RQ with a cheaper graph build),
// loaded and indexed one after the other so their build times are measured
// side by side in one run, then searched with the same queries: recall@10 of
// each against the exact top 10 (brute force in this process), and overlap
// of each with the uncompressed index's top 10.
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

// recallVariant is one HNSW configuration under test.
type recallVariant struct {
	Label  string
	Config map[string]any
}

// recallVariants are the indexes compared; the first is the reference the
// others' overlap is measured against. Strata's own configuration
// (schema.CompressedIndexConfig) is one of them and is marked in the report.
func recallVariants() []recallVariant {
	rq := map[string]any{"enabled": true}
	return []recallVariant{
		{"uncompressed, Weaviate's build defaults", map[string]any{"distance": "cosine"}},
		{"8-bit RQ, Weaviate's build defaults", map[string]any{"distance": "cosine", "rq": rq}},
		{"8-bit RQ, efConstruction 64, maxConnections 32", map[string]any{"distance": "cosine", "rq": rq, "efConstruction": 64, "maxConnections": 32}},
		{"8-bit RQ, efConstruction 64, maxConnections 32, search ef at least 160", map[string]any{"distance": "cosine", "rq": rq, "efConstruction": 64, "maxConnections": 32, "dynamicEfMin": 160}},
		{"8-bit RQ, efConstruction 64, maxConnections 16, search ef at least 200", map[string]any{"distance": "cosine", "rq": rq, "efConstruction": 64, "maxConnections": 16, "dynamicEfMin": 200}},
		{"8-bit RQ, efConstruction 64, maxConnections 32, search ef at least 160, rescore 64", map[string]any{"distance": "cosine",
			"rq": map[string]any{"enabled": true, "rescoreLimit": schema.RescoreLimit}, "efConstruction": 64, "maxConnections": 32, "dynamicEfMin": 160}},
	}
}

type variantResult struct {
	recallVariant
	Reported        string // the vector index config as Weaviate reports it
	Strata          bool   // the configuration Strata's ChunkVector uses
	Insert, Index   time.Duration
	Recall, Overlap float64 // against the exact top 10; against the first variant's top 10
	P50             time.Duration
}

type recallResult struct {
	Vectors, Queries int
	Variants         []variantResult
}

func runRecall(ctx context.Context, cfg Config, st *localstack.Stack, centres [][]float32, progress func(string, ...any)) (recallResult, error) {
	res := recallResult{Vectors: cfg.RecallVectors, Queries: 200}
	wv, err := schema.NewClient(st.Servers.WeaviateHost, st.Servers.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
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
	data := make([][]float32, cfg.RecallVectors)
	for i := range data {
		data[i] = point()
	}
	strata := fmt.Sprint(schema.CompressedIndexConfig())
	for i, v := range recallVariants() {
		class := fmt.Sprintf("%s%d", recallClass, i)
		vr := variantResult{recallVariant: v, Strata: fmt.Sprint(v.Config) == strata}
		defer func() { _ = wv.Schema().ClassDeleter().WithClassName(class).Do(context.Background()) }()
		if err := loadProbe(ctx, wv, st, class, v.Config, data, &vr); err != nil {
			return res, fmt.Errorf("%s: %w", v.Label, err)
		}
		progress("recall: %s: %d vectors stored in %s, indexed %s later", v.Label, len(data), vr.Insert.Round(time.Second), vr.Index.Round(time.Second))
		res.Variants = append(res.Variants, vr)
	}

	lat := make([][]time.Duration, len(res.Variants))
	for range res.Queries {
		q := point()
		exact := exactTop(data, q, 10)
		var reference []int
		for i := range res.Variants {
			got, took, err := searchProbe(ctx, wv, fmt.Sprintf("%s%d", recallClass, i), q)
			if err != nil {
				return res, err
			}
			if i == 0 {
				reference = got
			}
			lat[i] = append(lat[i], took)
			res.Variants[i].Recall += float64(common(got, exact)) / 10 / float64(res.Queries)
			res.Variants[i].Overlap += float64(common(got, reference)) / float64(max(1, len(reference))) / float64(res.Queries)
		}
	}
	for i := range res.Variants {
		slices.Sort(lat[i])
		res.Variants[i].P50 = lat[i][len(lat[i])/2]
	}
	return res, nil
}

// loadProbe creates class with one named vector "v" indexed as config, stores
// data in it and waits until Weaviate's vector queue has indexed all of it.
func loadProbe(ctx context.Context, wv *weaviate.Client, st *localstack.Stack, class string, config map[string]any, data [][]float32, vr *variantResult) error {
	_ = wv.Schema().ClassDeleter().WithClassName(class).Do(ctx)
	err := wv.Schema().ClassCreator().WithClass(&models.Class{Class: class, Properties: []*models.Property{{Name: "n", DataType: []string{"int"}}},
		VectorConfig: map[string]models.VectorConfig{"v": {Vectorizer: map[string]any{"none": map[string]any{}}, VectorIndexType: "hnsw", VectorIndexConfig: config}}}).Do(ctx)
	if err != nil {
		return fmt.Errorf("create %s: %w", class, err)
	}
	have, err := wv.Schema().ClassGetter().WithClassName(class).Do(ctx)
	if err != nil {
		return fmt.Errorf("read %s: %w", class, err)
	}
	reported, _ := have.VectorConfig["v"].VectorIndexConfig.(map[string]any)
	for _, k := range []string{"efConstruction", "maxConnections", "dynamicEfMin"} {
		if want, ok := config[k]; ok && fmt.Sprint(reported[k]) != fmt.Sprint(want) {
			return fmt.Errorf("weaviate reports %s %v, asked for %v", k, reported[k], want)
		}
	}
	if _, ok := config["rq"]; ok {
		if rq, _ := reported["rq"].(map[string]any); rq["enabled"] != true {
			return fmt.Errorf("weaviate did not enable RQ: %v", reported)
		}
	}
	vr.Reported = fmt.Sprintf("efConstruction %v, maxConnections %v, dynamicEfMin %v, rq %v", reported["efConstruction"], reported["maxConnections"], reported["dynamicEfMin"], reported["rq"])
	t0 := time.Now()
	for start := 0; start < len(data); start += 500 {
		var objs []*models.Object
		for i := start; i < min(start+500, len(data)); i++ {
			objs = append(objs, &models.Object{Class: class, ID: strfmt.UUID(uuid.NewSHA1(uuid.NameSpaceOID, fmt.Append(nil, i)).String()),
				Properties: map[string]any{"n": i}, Vectors: models.Vectors{"v": models.Vector(data[i])}})
		}
		if _, err := wv.Batch().ObjectsBatcher().WithObjects(objs...).Do(ctx); err != nil {
			return fmt.Errorf("insert probe vectors: %w", err)
		}
	}
	vr.Insert = time.Since(t0)
	if err := waitVectorQueue(ctx, st); err != nil {
		return err
	}
	vr.Index = time.Since(t0) - vr.Insert
	return nil
}

// probeLimit is how many hits a probe query asks for, of which the first
// 10 are compared: queryd's smallest vector page, so that the probe
// rescores as many candidates as queryd's searches do (Weaviate rescores
// only up to rq.rescoreLimit candidates, when the limit is at most that).
const probeLimit = 30

func searchProbe(ctx context.Context, wv *weaviate.Client, class string, q []float32) ([]int, time.Duration, error) {
	t0 := time.Now()
	resp, err := wv.GraphQL().Get().WithClassName(class).WithFields(graphql.Field{Name: "n"}).
		WithNearVector((&graphql.NearVectorArgumentBuilder{}).WithVector(q).WithTargetVectors("v")).WithLimit(probeLimit).Do(ctx)
	took := time.Since(t0)
	if err != nil {
		return nil, 0, fmt.Errorf("search %s: %w", class, err)
	}
	if len(resp.Errors) > 0 {
		return nil, 0, fmt.Errorf("search %s: %s", class, resp.Errors[0].Message)
	}
	var out []int
	rows := wvquery.Rows(resp, class)
	for _, row := range rows[:min(10, len(rows))] {
		out = append(out, wvquery.Int(row, "n"))
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
	fmt.Fprintf(&b, "# Vector compression and graph build: recall@10 and indexing speed of HNSW variants\n\n")
	fmt.Fprintf(&b, "Written by `go run ./deploy/measure/strata-bench %s` on %s (%s).\n\n", strings.Join(cfg.args, " "), time.Now().UTC().Format("2006-01-02 15:04 MST"), testservers.Weaviate.Name+" "+testservers.Weaviate.Version)
	fmt.Fprintf(&b, "%d vectors of 512 dimensions (clusters around %d real use-lite-512 embeddings, Gaussian noise %.2f per dimension, unit length), stored in one collection per variant (HNSW, cosine, asynchronous indexing), one variant after the other in one run. %d queries drawn the same way, each asking for %d hits (queryd's smallest vector page) of which the first 10 are compared; the exact top 10 is computed by brute force. Indexing is the time from the last stored object until Weaviate's vector queue is empty (polled every 2 s).\n\n", r.Vectors, cfg.RealVectors, recallNoise, r.Queries, probeLimit)
	fmt.Fprintf(&b, "| HNSW variant | Weaviate reports | recall@10 vs exact | overlap with uncompressed | p50 query | store | index | vectors/s (store + index) |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, v := range r.Variants {
		label := v.Label
		if v.Strata {
			label = "**" + label + " (Strata's ChunkVector)**"
		}
		total := v.Insert + v.Index
		fmt.Fprintf(&b, "| %s | %s | %.3f | %.3f | %s ms | %s | %s | %.0f |\n", label, v.Reported, v.Recall, v.Overlap, ms(v.P50),
			v.Insert.Round(100*time.Millisecond), v.Index.Round(100*time.Millisecond), float64(r.Vectors)/total.Seconds())
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
