// Command strata-queryembed measures the two ways queryd can get a query's
// vector (issue 38, docs/decisions.md "Where query vectors come from"),
// side by side in one run:
//
//   - library: queryd imports the embedding engine (embedder/engine) and
//     embeds in its own process, as it does today;
//   - request-reply: queryd asks a process that holds the model over NATS
//     (a responder this command starts: itself, re-run with -responder).
//
// It reports the latency of one query's vector both ways (alternating
// rounds, the same queries) and the resident memory of a real queryd with
// the model (-embedding-provider local) and without it (none), each after
// the same tool calls, and of the responder that would hold the model
// instead:
//
//	go run ./deploy/measure/strata-queryembed -out docs/bench/query-embedding.md
//
// It starts nats-server, MinIO and weaviate-server from the cached binaries
// on free ports in a temporary directory, and stops them at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/embedder/engine"
	"github.com/strata-kb/strata/embedder/vectorcache"
)

// subject is the responder's request subject (this measurement's own).
const subject = "strata.bench.queryembed"

func main() { program.Main("strata-queryembed", run) }

// config is the command line.
type config struct {
	Queries   int // per side per round
	Rounds    int
	Seed      uint64
	ModelDir  string
	Calls     int // tool calls before queryd's memory is read
	Out       string
	Responder bool   // internal: serve query vectors over NATS
	NATSURL   string // with -responder
}

func run(ctx context.Context, args []string) error {
	var c config
	fs := flag.NewFlagSet("strata-queryembed", flag.ContinueOnError)
	fs.IntVar(&c.Queries, "queries", 200, "queries embedded per side in each round")
	fs.IntVar(&c.Rounds, "rounds", 6, "rounds per side, alternating which side goes first")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the queries")
	fs.StringVar(&c.ModelDir, "embedding-model-dir", engine.DefaultModelDir(), "directory of the USE-Lite model files (fetched by: go tool task install)")
	fs.IntVar(&c.Calls, "calls", 50, "hybrid_search calls each queryd answers before its memory is read")
	fs.StringVar(&c.Out, "out", "", "also write the markdown report to this file")
	fs.BoolVar(&c.Responder, "responder", false, "internal: answer query-vector requests over NATS (-nats-url) and exit when stdin closes")
	fs.StringVar(&c.NATSURL, "nats-url", "", "with -responder: the NATS server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.Responder {
		return respond(ctx, c)
	}
	return measure(ctx, c)
}

func newProvider(modelDir string) (engine.Provider, error) {
	p, err := engine.New(engine.Config{Provider: "local", ModelDir: modelDir})
	if err != nil {
		return nil, fmt.Errorf("load the local model from %s: %w", modelDir, err)
	}
	return p, nil
}

// respond answers each request (a query's text) with its vector, as
// little-endian float32s, or an empty reply with an error header.
func respond(ctx context.Context, c config) error {
	p, err := newProvider(c.ModelDir)
	if err != nil {
		return err
	}
	nc, err := nats.Connect(c.NATSURL, nats.Name("strata-queryembed responder"))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", c.NATSURL, err)
	}
	defer nc.Close()
	_, err = nc.Subscribe(subject, func(m *nats.Msg) {
		vecs, err := p.Embed(ctx, []string{string(m.Data)})
		if err != nil {
			reply := nats.NewMsg(m.Reply)
			reply.Header.Set("Error", err.Error())
			_ = m.RespondMsg(reply)
			return
		}
		_ = m.Respond(vectorcache.Encode(vecs[0]))
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	if err := nc.Flush(); err != nil {
		return err
	}
	fmt.Println("ready") // the parent waits for this line
	// The parent closes stdin to stop the responder.
	_, _ = os.Stdin.Read(make([]byte, 1))
	return nil
}

// remote asks the responder for a query's vector.
func remote(ctx context.Context, nc *nats.Conn, q string) ([]float32, error) {
	m, err := nc.RequestWithContext(ctx, subject, []byte(q))
	if err != nil {
		return nil, fmt.Errorf("request a query vector: %w", err)
	}
	if e := m.Header.Get("Error"); e != "" {
		return nil, errors.New(e)
	}
	v, err := vectorcache.Decode(m.Data)
	if err != nil {
		return nil, fmt.Errorf("reply: %w", err)
	}
	return v, nil
}

// queries are n agent-like questions of 4-9 words from a fixed vocabulary.
func queries(n int, seed uint64) []string {
	words := []string{"how", "do", "we", "rotate", "the", "api", "keys", "for", "billing", "service", "what", "is", "vacation",
		"policy", "in", "germany", "deploy", "kubernetes", "cluster", "incident", "postmortem", "database", "backup", "schedule",
		"security", "review", "onboarding", "checklist", "new", "engineers", "quarterly", "revenue", "report", "expense", "limits"}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]string, n)
	for i := range out {
		q := ""
		for j := range 4 + r.IntN(6) {
			if j > 0 {
				q += " "
			}
			q += words[r.IntN(len(words))]
		}
		out[i] = q
	}
	return out
}

func timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 10*time.Second)
}
