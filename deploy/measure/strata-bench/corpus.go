package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// The synthetic corpus: English-ish markdown files whose words follow a
// Zipf distribution over a fixed vocabulary (so BM25 has common and rare
// terms), plus a few made-up words per file that only that file uses (so a
// keyword query can find one file among many). Everything derives from the
// seed: the same flags give the same index.

// vocabulary is the fixed word list, roughly in order of frequency: Zipf
// sampling makes the first words common and the last ones rare.
var vocabulary = strings.Fields(`
the of and to in is that for it as with be on by this are from or at an not can which
will when you your use data file system user service server request value time each new
configuration index query search document version project release branch cluster node
network storage memory cache token chunk section model vector embedding latency error
message stream bucket object key policy access role team release deploy build test
install update upgrade restart timeout retry limit quota metric alert dashboard report
review design proposal decision meeting customer contract invoice payment order product
feature option setting default parameter argument field table column schema record
event queue worker job task schedule backup restore snapshot replica shard partition
region zone endpoint gateway proxy certificate secret password credential permission
audit log trace span sample histogram percentile throughput bandwidth capacity budget
forecast quarter revenue growth target plan roadmap milestone sprint backlog ticket
incident outage postmortem runbook escalation oncall handover summary overview guide
tutorial example reference appendix chapter paragraph sentence translation language
english french german spanish italian dutch summary introduction conclusion background
method result discussion analysis evaluation benchmark baseline experiment hypothesis
library package module dependency import export interface function method parameter
compile link binary image container volume mount path folder directory permission owner
group member account profile session cookie header payload response status code
warning notice critical minor major blocker priority severity impact risk mitigation
vendor supplier partner contractor employee manager director engineer analyst designer
office building floor room desk laptop monitor keyboard printer scanner network cable
coffee lunch holiday vacation travel expense receipt approval signature deadline
weekly monthly yearly daily hourly minute second morning evening afternoon midnight
quickly slowly carefully rarely often usually always never sometimes probably exactly
large small fast slow secure stable recent older current previous next final initial
primary secondary external internal public private shared local remote global regional
create read write delete list find move copy rename merge split sort filter group count
measure compare verify validate enable disable configure monitor observe explain describe
`)

// syllables build the made-up words that mark each file.
var syllables = strings.Fields("ka lo mi ra ve zu to pe ni sa qu or an el is ul ya xo bri dar fen gol hus jin kor lum nar pol rix sol tam vor wex zan")

// chunkSpec shapes the synthetic files.
const (
	sectionsPerFile = 10
	wordsPerChunk   = 90 // about 120 tokens: short enough that a section reads inline (budget 2,000)
	markerWords     = 3  // made-up words per file
	tokensPerWord   = 1.3
)

// corpusFile is one synthetic file version and what the benchmark needs to
// address it.
type corpusFile struct {
	FV      pipeline.FileVersion
	Folder  string
	Markers []string // the file's made-up words
	// Readable says whether the restricted key of the access mode may read
	// the file (always true outside it: no file has groups then).
	Readable bool
}

func (f *corpusFile) project() string { return f.FV.Object.Project }

// corpus is the whole synthetic index.
type corpus struct {
	Files         []*corpusFile
	ChunksPerFile int
	Projects      []string
	// SpreadSample spreads the chunks embedded with the model evenly over
	// the files (sampleSlot) instead of giving them to the first files, so
	// a query's nearest neighbours are in many files (metadata mode: a
	// filter's share of them is its share of the documents).
	SpreadSample bool
}

func (c *corpus) chunkCount() int { return len(c.Files) * c.ChunksPerFile }

// sampleSlot is where in a sample of n model-embedded vectors the corpus's
// chunk g is (file k's chunk i is g = k*ChunksPerFile+i), -1 for a chunk
// that gets a random vector: the first n chunks, or with SpreadSample one
// chunk in each stretch of chunkCount/n, at a different place in each
// (chunk j*stride + j%stride is vector j).
func (c *corpus) sampleSlot(g, n int) int {
	switch {
	case n <= 0:
		return -1
	case !c.SpreadSample:
		if g < n {
			return g
		}
		return -1
	}
	stride := max(1, c.chunkCount()/n)
	if j := g / stride; j < n && g%stride == j%stride {
		return j
	}
	return -1
}

// projectNames names n projects: "bench", or bench0..bench(n-1).
func projectNames(n int) []string {
	if n <= 1 {
		return []string{"bench"}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("bench%d", i)
	}
	return out
}

// The groups of the access mode (-access): one file in -access-every has
// readersGroup, the restricted key's only group; the others otherGroup.
const (
	readersGroup = "bench-readers"
	otherGroup   = "bench-others"
)

// generateCorpus builds ceil(chunks/chunksPerFile) files of chunksPerFile
// chunks. With accessEvery > 0 every file has groups: file k has
// readersGroup when k%accessEvery == 0, otherGroup otherwise; with 0 no file
// has groups (every key reads every file).
func generateCorpus(seed int64, chunks, chunksPerFile, projects, accessEvery int) *corpus {
	c := &corpus{ChunksPerFile: chunksPerFile, Projects: projectNames(projects)}
	n := (chunks + chunksPerFile - 1) / chunksPerFile
	now := time.Now().UTC()
	for k := range n {
		f := generateFile(seed, k, chunksPerFile, c.Projects[k%len(c.Projects)], now)
		f.Readable = true
		if accessEvery > 0 {
			f.Readable = k%accessEvery == 0
			group := otherGroup
			if f.Readable {
				group = readersGroup
			}
			f.FV.Access = pipeline.Access{Groups: []string{group}, Source: "tag", ReadAt: now}
		}
		c.Files = append(c.Files, f)
	}
	return c
}

// readable returns the files the restricted key of the access mode may read.
func (c *corpus) readable() []*corpusFile {
	var out []*corpusFile
	for _, f := range c.Files {
		if f.Readable {
			out = append(out, f)
		}
	}
	return out
}

// textGen draws words and sentences.
type textGen struct {
	rng  *rand.Rand
	zipf *rand.Zipf
}

func newTextGen(seed int64, k int) *textGen {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(k)))
	return &textGen{rng: rng, zipf: rand.NewZipf(rng, 1.07, 5, uint64(len(vocabulary)-1))}
}

func (g *textGen) word() string { return vocabulary[g.zipf.Uint64()] }

func (g *textGen) madeUpWord() string {
	var b strings.Builder
	for range 3 + g.rng.IntN(2) {
		b.WriteString(syllables[g.rng.IntN(len(syllables))])
	}
	return b.String()
}

func (g *textGen) title(words int) string {
	parts := make([]string, words)
	for i := range parts {
		parts[i] = vocabulary[20+g.rng.IntN(len(vocabulary)-20)] // skip the function words
	}
	parts[0] = strings.ToUpper(parts[0][:1]) + parts[0][1:]
	return strings.Join(parts, " ")
}

// chunkText is about wordsPerChunk words of sentences; each marker is
// woven in with probability p.
func (g *textGen) chunkText(markers []string, p float64) string {
	var sentences []string
	words := 0
	for words < wordsPerChunk {
		n := 8 + g.rng.IntN(10)
		s := make([]string, n)
		for i := range s {
			s[i] = g.word()
		}
		for _, m := range markers {
			if g.rng.Float64() < p/4 { // about p per chunk over ~4 sentences
				s[g.rng.IntN(n)] = m
			}
		}
		s[0] = strings.ToUpper(s[0][:1]) + s[0][1:]
		sentences = append(sentences, strings.Join(s, " ")+".")
		words += n
	}
	return strings.Join(sentences, " ")
}

// generateFile builds file k: a markdown file of sectionsPerFile sections
// under a two-level folder tree, its chunks addressed by deterministic ids.
func generateFile(seed int64, k, chunksPerFile int, project string, now time.Time) *corpusFile {
	g := newTextGen(seed, k)
	folder := fmt.Sprintf("area%02d/part%02d", k%10, (k/10)%10)
	path := fmt.Sprintf("%s/doc-%05d.md", folder, k)
	markers := make([]string, markerWords)
	for i := range markers {
		markers[i] = g.madeUpWord()
	}
	docTitle := g.title(4)
	type secText struct {
		title  string
		chunks []string
	}
	secs := make([]secText, sectionsPerFile)
	for i := range secs {
		secs[i].title = g.title(3)
	}
	for i := range chunksPerFile {
		s := i * sectionsPerFile / chunksPerFile
		secs[s].chunks = append(secs[s].chunks, g.chunkText(markers, 0.3))
	}

	// Lay the text out as the ingestor would see it and record offsets.
	var text strings.Builder
	offset := 0
	write := func(s string) { text.WriteString(s); offset += utf8.RuneCountInString(s) }
	write("# " + docTitle + "\n\n")
	var sections []pipeline.Section
	var chunks []pipeline.Chunk
	var chunkSection []int // ordinal of each chunk's section
	for ord, s := range secs {
		start := offset
		write("## " + s.title + "\n\n")
		tokens := 0
		for _, body := range s.chunks {
			cs := offset
			write(body + "\n\n")
			sum := sha256.Sum256([]byte(body))
			tc := int(math.Round(float64(len(strings.Fields(body))) * tokensPerWord))
			tokens += tc
			chunks = append(chunks, pipeline.Chunk{Index: len(chunks), Content: body, StartOffset: cs, EndOffset: offset - 2,
				TokenCount: tc, SourceChecksum: hex.EncodeToString(sum[:]), HeadingPath: []string{docTitle, s.title}, Kind: "text"})
			chunkSection = append(chunkSection, ord)
		}
		sections = append(sections, pipeline.Section{Ordinal: ord, Title: s.title, HeadingPath: []string{docTitle, s.title}, Level: 2,
			StartOffset: start, EndOffset: offset, TokenCount: tokens, ChunkCount: len(s.chunks)})
	}
	body := text.String()
	sum := sha256.Sum256([]byte(body))
	checksum := hex.EncodeToString(sum[:])
	fileID := ids.File(project, "", path)
	etag := checksum[:32]
	fvID := ids.FileVersion(fileID, etag, checksum)
	tokens := 0
	for i := range sections {
		sections[i].ID = ids.Section(fvID, i)
		tokens += sections[i].TokenCount
	}
	for i := range chunks {
		chunks[i].ID = ids.Chunk(fvID, i)
		chunks[i].SectionID = sections[chunkSection[i]].ID
	}
	fv := pipeline.FileVersion{
		Object: pipeline.Object{Bucket: "strata", Key: project + "/" + path, Project: project, Path: path, ETag: etag,
			Sequencer: fmt.Sprintf("%016X", k+1), Size: int64(len(body)), ContentType: "text/markdown", EventTime: now},
		FileID: fileID, FileVersionID: fvID, Checksum: checksum, Format: "markdown", Title: docTitle,
		Status: pipeline.StatusIndexed, TextLength: utf8.RuneCountInString(body), TokenCount: tokens,
		Sections: sections, Chunks: chunks, IngestedAt: now,
	}
	return &corpusFile{FV: fv, Folder: folder, Markers: markers}
}

// queryText is a keyword-style question: two content words and one of a
// file's made-up words (so BM25 ranks that file's chunks first).
func queryText(rng *rand.Rand, f *corpusFile) string {
	w := func() string { return vocabulary[20+rng.IntN(120)] }
	return w() + " " + f.Markers[rng.IntN(len(f.Markers))] + " " + w()
}

// randomUnitVector is a uniformly random direction in dim dimensions.
func randomUnitVector(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		norm += x * x
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	return v
}
