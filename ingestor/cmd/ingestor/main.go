// Command ingestor consumes bucket events from JetStream, fetches each object
// version, extracts and chunks it, and publishes the file version (or its
// deletion) on the chunks stream.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/ocr"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/ingest"
	"github.com/strata-kb/strata/ingestor/isolate"
	"github.com/strata-kb/strata/ingestor/live"
	"github.com/strata-kb/strata/ingestor/objectstore"
	"github.com/strata-kb/strata/ingestor/tokens"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/freshness"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/service"
	"github.com/strata-kb/strata/shared/stage"
)

// Config is the ingestor's configuration.
type Config struct {
	config.Common
	S3Endpoint     string
	S3AccessKey    string
	S3SecretKey    string
	S3Secure       bool
	Concurrency    int
	LiveSubject    string
	MaxAckPending  int
	MaxObjectBytes int64
	// ObjectBytesInFlight bounds the object bytes held at once.
	ObjectBytesInFlight int64
	MaxMessageBytes     int
	TargetTokens        int
	OverlapTokens       int
	AssetsBucket        string
	Bucket              string
	ExtractTimeout      time.Duration
	MaxTextBytes        int
	MaxPages            int
	MaxImages           int
	MaxChildMemory      int64
	PopplerDir          string
	PDFScratchDir       string
	PictureReader       string
	UniDoc              pdf.License
	OCR                 bool
	OCRLanguages        string
	OCRMaxPages         int
	OCRTimeout          time.Duration
	FileMemory          int64
	MaxFileBytes        int64
	Reconcile           time.Duration
	ReconcileMinAge     time.Duration
}

// RegisterFlags registers the ingestor's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Common.RegisterFlags(fs, "127.0.0.1:8081")
	fs.StringVar(&c.S3Endpoint, "s3-endpoint", "127.0.0.1:9000", "S3/MinIO endpoint host:port")
	fs.StringVar(&c.S3AccessKey, "s3-access-key", "", "S3 access key")
	fs.StringVar(&c.S3SecretKey, "s3-secret-key", "", "S3 secret key")
	fs.BoolVar(&c.S3Secure, "s3-secure", false, "use TLS to reach S3")
	fs.IntVar(&c.Concurrency, "concurrency", 4, "objects processed at once")
	fs.IntVar(&c.MaxAckPending, "max-ack-pending", 64, "unacknowledged events the consumer may hold")
	fs.StringVar(&c.LiveSubject, "live-subject", pipeline.ObjectLiveSubject, "plain NATS subject of MinIO's live event target, processed at once (\"\": only the durable events, up to 3 s later)")
	fs.Int64Var(&c.MaxObjectBytes, "max-object-bytes", 256<<20, "larger objects are recorded as failed, not read")
	fs.Int64Var(&c.ObjectBytesInFlight, "object-bytes-in-flight", 512<<20, "object bytes read at once, by the events' sizes: a large file waits for room rather than take the ingestor's memory with others (at least -max-object-bytes)")
	fs.IntVar(&c.MaxMessageBytes, "max-message-bytes", 0, "largest file version sent in its message; a larger one goes by reference, through the NATS object store "+pipeline.BodiesBucket+" (0: what the server's max_payload allows)")
	fs.IntVar(&c.TargetTokens, "chunk-tokens", 512, "target chunk size in tokens")
	fs.IntVar(&c.OverlapTokens, "chunk-overlap", 0, "tokens of trailing blocks a chunk repeats from the previous one")
	fs.StringVar(&c.AssetsBucket, "assets-bucket", "strata-assets", "bucket for images extracted from documents (no notifications)")
	fs.StringVar(&c.Bucket, "bucket", "strata", "the watched bucket, listed by reindex requests")
	fs.DurationVar(&c.ReconcileMinAge, "reconcile-min-age", 2*time.Minute, "unforced reindexes leave objects changed more recently than this alone (their events are on the way), and re-emit those whose event has been pending 10 times as long, at least a minute (it was lost)")
	fs.DurationVar(&c.Reconcile, "reconcile-interval", 5*time.Minute, "how often to compare the bucket with what was ingested and re-emit lost events (0: never)")
	def := extract.DefaultLimits()
	fs.DurationVar(&c.ExtractTimeout, "extract-timeout", def.Timeout, "time limit to extract one file")
	fs.IntVar(&c.MaxTextBytes, "max-text-bytes", def.MaxTextBytes, "extracted text over this size is an error")
	fs.IntVar(&c.MaxPages, "max-pages", def.MaxPages, "pages extracted per PDF")
	fs.IntVar(&c.MaxImages, "max-images", def.MaxImages, "images kept per document")
	fs.Int64Var(&c.MaxChildMemory, "extract-memory-bytes", def.MaxMemoryBytes, "address-space limit of each poppler process")
	fs.StringVar(&c.PopplerDir, "poppler-dir", "", "directory of pdftotext, pdfinfo, pdftohtml, pdfimages (default: PATH)")
	fs.StringVar(&c.PDFScratchDir, "pdf-scratch-dir", "", "where PDF pictures are written while extracted: a tmpfs (/dev/shm) makes PDFs with pictures up to 2x faster than a disk (default: the system's temporary directory)")
	fs.StringVar(&c.PictureReader, "pdf-picture-reader", defaultPictureReader(), "strata-pdf-pictures, which reads a PDF's pictures from its structure instead of pdfimages' second pass over every page (pdfimages still reads what it cannot); \"\": pdfimages only (default: the one beside the ingestor, else on PATH)")
	fs.StringVar(&c.UniDoc.MeteredKey, "unidoc-metered-key", "", "UniDoc metered API key: use UniPDF for PDFs (needs network access to UniDoc)")
	fs.StringVar(&c.UniDoc.OfflineKey, "unidoc-license-key", "", "UniDoc offline license key contents: use UniPDF for PDFs")
	fs.StringVar(&c.UniDoc.CustomerName, "unidoc-customer", "", "customer name of the UniDoc offline license")
	fs.BoolVar(&c.OCR, "ocr", true, "read scanned PDF pages and pictures (PNG, JPEG, TIFF) with Tesseract; without it, or without Tesseract, such files are recorded with the reason")
	fs.StringVar(&c.OCRLanguages, "ocr-languages", "eng", "Tesseract languages joined by + (e.g. eng+deu; Debian: tesseract-ocr-<code> each)")
	fs.IntVar(&c.OCRMaxPages, "ocr-max-pages", def.MaxOCRPages, "pages or pictures of one file read by OCR; the rest are named in a warning (0: no limit)")
	fs.DurationVar(&c.OCRTimeout, "ocr-timeout", def.OCRTimeout, "time OCR may take on one file, beyond -extract-timeout; the pages left are named in a warning (0: -extract-timeout alone)")
	fs.Int64Var(&c.MaxFileBytes, "max-file-bytes", def.MaxFileBytes, "text, structure and images one file's reading may hold, counted as it reads (text-only formats: at most 64 MiB); over it the file is recorded as failed")
	fs.Int64Var(&c.FileMemory, "file-memory-bytes", 1<<30, "memory budget of one file read again alone, in a process of its own, after an attempt at it was cut short (a crash): over it the file is recorded as failed")
}

// Limits returns the extraction limits.
func (c *Config) Limits() extract.Limits {
	lim := extract.DefaultLimits()
	lim.Timeout, lim.MaxTextBytes, lim.MaxPages, lim.MaxImages, lim.MaxMemoryBytes = c.ExtractTimeout, c.MaxTextBytes, c.MaxPages, c.MaxImages, c.MaxChildMemory
	lim.MaxOCRPages, lim.OCRTimeout, lim.MaxFileBytes = c.OCRMaxPages, c.OCRTimeout, c.MaxFileBytes
	return lim
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p config.Problems
	c.Common.Validate(&p)
	if c.S3Endpoint == "" {
		p.Addf("s3-endpoint", "required")
	}
	if c.S3AccessKey == "" || c.S3SecretKey == "" {
		p.Addf("s3-access-key", "S3 credentials are required (also STRATA_S3_SECRET_KEY)")
	}
	if c.Concurrency < 1 || c.Concurrency > 256 {
		p.Addf("concurrency", "must be 1..256, got %d", c.Concurrency)
	}
	if c.ObjectBytesInFlight < c.MaxObjectBytes {
		p.Addf("object-bytes-in-flight", "must be at least -max-object-bytes (%d), got %d", c.MaxObjectBytes, c.ObjectBytesInFlight)
	}
	if c.MaxMessageBytes < 0 {
		p.Addf("max-message-bytes", "must be 0 or more, got %d", c.MaxMessageBytes)
	}
	if c.MaxAckPending < c.Concurrency {
		p.Addf("max-ack-pending", "must be >= concurrency (%d), got %d", c.Concurrency, c.MaxAckPending)
	}
	if c.MaxObjectBytes < 1 {
		p.Addf("max-object-bytes", "must be positive")
	}
	if c.TargetTokens < 16 || c.TargetTokens > 8192 {
		p.Addf("chunk-tokens", "must be 16..8192, got %d", c.TargetTokens)
	}
	if c.OverlapTokens < 0 || c.OverlapTokens >= c.TargetTokens {
		p.Addf("chunk-overlap", "must be 0 or more and less than -chunk-tokens (%d), got %d", c.TargetTokens, c.OverlapTokens)
	}
	if c.Reconcile != 0 && c.Reconcile < time.Second {
		p.Addf("reconcile-interval", "must be 0 or at least 1s, got %v", c.Reconcile)
	}
	if c.OCRMaxPages < 0 {
		p.Addf("ocr-max-pages", "must be 0 (no limit) or more, got %d", c.OCRMaxPages)
	}
	if c.OCRTimeout != 0 && c.OCRTimeout < time.Second {
		p.Addf("ocr-timeout", "must be 0 (-extract-timeout alone) or at least 1s, got %v", c.OCRTimeout)
	}
	if c.MaxFileBytes < 1<<20 {
		p.Addf("max-file-bytes", "must be at least 1 MiB, got %d", c.MaxFileBytes)
	}
	if c.FileMemory < 64<<20 {
		p.Addf("file-memory-bytes", "must be at least 64 MiB, got %d", c.FileMemory)
	}
	if c.AssetsBucket == "" {
		p.Addf("assets-bucket", "required")
	}
	if c.PDFScratchDir != "" {
		if st, err := os.Stat(c.PDFScratchDir); err != nil || !st.IsDir() {
			p.Addf("pdf-scratch-dir", "must be an existing directory, got %q", c.PDFScratchDir)
		}
	}
	if c.PictureReader != "" {
		if st, err := os.Stat(c.PictureReader); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			p.Addf("pdf-picture-reader", "must be an executable file (strata-pdf-pictures) or \"\", got %q", c.PictureReader)
		}
	}
	if c.ExtractTimeout < time.Second {
		p.Addf("extract-timeout", "must be at least 1s, got %v", c.ExtractTimeout)
	}
	if c.MaxTextBytes < 1024 || c.MaxPages < 1 || c.MaxImages < 0 || c.MaxChildMemory < 64<<20 {
		p.Addf("max-text-bytes", "limits must be positive (max-text-bytes >= 1024, max-pages >= 1, max-images >= 0, extract-memory-bytes >= 64 MiB)")
	}
	if c.UniDoc.OfflineKey != "" && c.UniDoc.CustomerName == "" {
		p.Addf("unidoc-customer", "required with -unidoc-license-key")
	}
	if err := (pdf.Poppler{BinDir: c.PopplerDir}).Available(); err != nil {
		p.Addf("poppler-dir", "%v", err)
	}
	return p.Err()
}

// pictureReaderName is the picture reader's command (ingestor/cmd/strata-pdf-pictures).
const pictureReaderName = "strata-pdf-pictures"

// defaultPictureReader finds strata-pdf-pictures beside the ingestor's
// executable (how the images and task up install them), else on PATH.
func defaultPictureReader() string {
	if exe, err := os.Executable(); err == nil {
		sibling := filepath.Join(filepath.Dir(exe), pictureReaderName)
		if st, err := os.Stat(sibling); err == nil && !st.IsDir() {
			return sibling
		}
	}
	if path, err := exec.LookPath(pictureReaderName); err == nil {
		if abs, err := filepath.Abs(path); err == nil {
			return abs
		}
	}
	return ""
}

func main() { service.Main("ingestor", run) }

// run starts the ingestor with the command line args and serves until ctx
// ends: service.Start parses and checks the configuration, then calls serve.
func run(ctx context.Context, args []string) error {
	return service.Start(ctx, "ingestor", args, new(Config), serve)
}

// serve ingests bucket events until ctx ends, then drains NATS.
func serve(ctx context.Context, cfg *Config, deps service.Deps) error {
	log, reg := deps.Log, deps.Metrics
	lim := cfg.Limits()
	lim.OCR = ocrReader(cfg, log)
	readers := detect.NewRegistry(pdf.New(cfg.UniDoc, pdf.Poppler{BinDir: cfg.PopplerDir, ScratchDir: cfg.PDFScratchDir, PictureReader: cfg.PictureReader}))
	if os.Getenv(isolate.ChildEnv) == "1" {
		// A child started by isolate: read one file within its budget
		// (not the worker's -memory-limit, which service.Start set) and exit.
		debug.SetMemoryLimit(cfg.FileMemory * 3 / 4)
		return isolate.Serve(ctx, readers, lim, os.Stdin, os.Stdout)
	}
	counter, err := tokens.New()
	if err != nil {
		return err
	}
	s3, err := bucket.Client(cfg.S3Endpoint, cfg.S3AccessKey, cfg.S3SecretKey, cfg.S3Secure)
	if err != nil {
		return err
	}
	st, err := stage.Connect(stage.Config{Name: "ingestor", Common: &cfg.Common, Concurrency: cfg.Concurrency, MaxAckPending: cfg.MaxAckPending,
		Running: func(httpAddr string) {
			pictures := cfg.PictureReader
			if pictures == "" {
				pictures = "pdfimages only (" + pictureReaderName + " not found or -pdf-picture-reader empty)"
			}
			log.Info("ingestor running", "nats", cfg.NATSURL, "s3", cfg.S3Endpoint, "http", httpAddr, "pdf_pictures", pictures)
		},
		Stopped: func() { log.Info("ingestor stopped; draining NATS") }}, deps)
	if err != nil {
		return err
	}
	defer st.Close()
	nc, js := st.NC, st.JS
	objects := &stage.Loop{Metric: "ingestor", Worker: "ingestor", Stream: pipeline.ObjectsStream, Consumer: pipeline.IngestorConsumer}
	if err := st.Consume(ctx, objects); err != nil {
		return err
	}
	states, err := freshness.Open(ctx, js, cfg.KVReplicas)
	if err != nil {
		return err
	}
	ing := ingest.New(ingest.Config{MaxObjectBytes: cfg.MaxObjectBytes, ObjectBytesInFlight: cfg.ObjectBytesInFlight, TargetTokens: cfg.TargetTokens,
		OverlapTokens: cfg.OverlapTokens, Limits: lim, Isolated: isolate.New(isolate.Config{Command: isolatedReader, MemoryBytes: cfg.FileMemory})},
		objectstore.Store{Client: s3}, objectstore.Assets{Client: s3, Bucket: cfg.AssetsBucket},
		readers, pipeline.Publisher{JS: js, MaxInline: cfg.MaxMessageBytes}, states, counter, log)
	if exists, err := s3.BucketExists(ctx, cfg.AssetsBucket); err != nil || !exists {
		return fmt.Errorf("assets bucket %q (-assets-bucket, STRATA_ASSETS_BUCKET) is not reachable or does not exist: %v", cfg.AssetsBucket, err)
	}
	reindexer := &ingest.Reindexer{Bucket: cfg.Bucket, Lister: objectstore.Store{Client: s3}, States: states, Pub: pipeline.Publisher{JS: js},
		MinAge: cfg.ReconcileMinAge}
	handle := func(ctx context.Context, msg jetstream.Msg) error {
		if strings.HasPrefix(msg.Subject(), pipeline.ReindexSubject+".") {
			res, err := reindexer.Handle(ctx, msg.Subject(), msg.Data())
			log.Info("reindex", "subject", msg.Subject(), "listed", res.Listed, "emitted", res.Emitted, "skipped", res.Skipped, "retagged", res.Retagged, "deleted", res.Deleted, "err", err)
			return err
		}
		delivered := uint64(1)
		if meta, err := msg.Metadata(); err == nil {
			delivered = meta.NumDelivered
		}
		return ing.HandleDelivery(ctx, msg.Data(), delivered)
	}
	if cfg.Reconcile > 0 {
		rec := &ingest.Reconciler{Bucket: cfg.Bucket, Heads: objectstore.Store{Client: s3}, Pub: pipeline.Publisher{JS: js}, Interval: cfg.Reconcile, Log: log}
		go rec.Run(ctx)
	}
	if cfg.LiveSubject != "" {
		outcomes := reg.NewOutcomes("ingestor_live_events", "bucket events taken from MinIO's live target, by outcome (dropped and failed ones are processed from the durable copy)",
			"processed", "failed", "dropped")
		listener := live.New(live.Config{Subject: cfg.LiveSubject, Queue: pipeline.IngestorConsumer, Concurrency: cfg.Concurrency,
			Backlog: cfg.MaxAckPending, Timeout: 2 * cfg.ExtractTimeout}, ing.HandleEvent, outcomes, log)
		waitLive, err := listener.Start(ctx, nc)
		if err != nil {
			return err
		}
		defer waitLive()
	}
	objects.Handle = handle
	return st.Run(ctx, objects)
}

// ocrReader is Tesseract, as -ocr and -ocr-languages say. Where it is
// missing (or -ocr=false) files that need OCR are recorded with that
// reason, never as documents without text.
func ocrReader(cfg *Config, log *slog.Logger) extract.OCR {
	if !cfg.OCR {
		return ocr.Missing{Err: fmt.Errorf("%w: OCR is off (-ocr=false)", extract.ErrNoOCR)}
	}
	t, err := ocr.New(ocr.Config{Languages: cfg.OCRLanguages})
	if err != nil {
		log.Warn("OCR is not available: scans and pictures are recorded without their text", "error", err)
		return ocr.Missing{Err: err}
	}
	log.Info("OCR with Tesseract", "languages", t.Languages())
	return t
}

// isolatedReader is the child that reads a file alone: this ingestor, with
// its flags, tracing off (spans on standard output would garble the answer).
func isolatedReader(ctx context.Context) *exec.Cmd {
	cmd := isolate.Self(ctx)
	cmd.Args = append(cmd.Args, "-trace-exporter=none")
	return cmd
}
