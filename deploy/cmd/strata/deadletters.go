package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// letter is one dead-lettered message.
type letter struct {
	Seq     uint64              `json:"seq"`
	Subject string              `json:"subject"`
	Time    time.Time           `json:"time"`
	Headers map[string][]string `json:"headers"`
	Object  string              `json:"object,omitempty"` // the bucket key the message was about
	Data    []byte              `json:"-"`
}

func (l letter) header(k string) string {
	if v := l.Headers[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func toLetter(m *jetstream.RawStreamMsg) letter {
	l := letter{Seq: m.Sequence, Subject: m.Subject, Time: m.Time, Headers: map[string][]string(m.Header), Data: m.Data}
	if l.Headers == nil {
		l.Headers = map[string][]string{}
	}
	l.Object = pipeline.ObjectKeyOf(m.Data)
	return l
}

// deadLetters is a command's connection to the dead-letter stream.
type deadLetters struct {
	nc *nats.Conn
	js jetstream.JetStream
	st jetstream.Stream
}

// openDeadLetters resolves the command's connection settings, connects to
// NATS and opens the dead-letter stream; Close ends the connection.
func openDeadLetters(ctx context.Context, a *app, cf *connFlags) (*deadLetters, error) {
	nc, js, err := cf.connectNATS(a)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, pipeline.DeadLetterStream)
	if err != nil {
		nc.Close()
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("stream %s does not exist: is this a Strata NATS server?", pipeline.DeadLetterStream)
		}
		return nil, fmt.Errorf("stream %s: %w", pipeline.DeadLetterStream, err)
	}
	return &deadLetters{nc: nc, js: js, st: st}, nil
}

func (d *deadLetters) Close() { d.nc.Close() }

// recentLetters reads up to limit dead letters (0 = all) matching keep,
// newest first from the end of the stream, and returns them oldest first.
func recentLetters(ctx context.Context, st jetstream.Stream, limit int, keep func(letter) bool) ([]letter, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, err
	}
	var out []letter
	for seq := info.State.LastSeq; seq >= info.State.FirstSeq && seq > 0 && (limit == 0 || len(out) < limit); seq-- {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("dead letter %d: %w", seq, err)
		}
		if l := toLetter(m); keep(l) {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

func runDeadLettersList(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "[--stage S] [--project P] [--limit N] [--json]",
		"Lists the messages in the "+pipeline.DeadLetterStream+" stream, oldest first, each with its sequence (for show and\n"+
			"redrive), the stage that gave up, the attempts, the object it was about and the error.")
	stage := f.String("stage", "", "only this stage's (ingestor, indexer, embedder)")
	project := f.String("project", "", "only those about this project's objects")
	limit := f.Int("limit", 100, "the most recent N (0 = all)")
	asJSON := f.Bool("json", false, "print them as JSON (headers included)")
	cf := addConnFlags(f, needNATS)
	if _, err := f.parse(a, args, 0, 0); err != nil {
		return err
	}
	if *limit < 0 {
		return usagef("--limit must be >= 0")
	}
	dl, err := openDeadLetters(ctx, a, cf)
	if err != nil {
		return err
	}
	defer dl.Close()
	letters, err := recentLetters(ctx, dl.st, *limit, letterFilter(*stage, *project))
	if err != nil {
		return err
	}
	if *asJSON {
		if letters == nil {
			letters = []letter{}
		}
		return printJSON(a.stdout, letters)
	}
	printLetters(a.stdout, letters)
	return nil
}

func letterFilter(stage, project string) func(letter) bool {
	return func(l letter) bool {
		if stage != "" && l.header(worker.HeaderStage) != stage {
			return false
		}
		if project != "" && !strings.HasPrefix(l.Object, project+"/") && !strings.HasPrefix(l.Object, project+"@") {
			return false
		}
		return true
	}
}

func printLetters(w io.Writer, letters []letter) {
	if len(letters) == 0 {
		fmt.Fprintln(w, "no dead letters")
		return
	}
	t := newTable(w, "SEQ", "FAILED AT", "STAGE", "ATTEMPTS", "OBJECT", "ERROR")
	for _, l := range letters {
		at := l.Time
		if parsed, err := time.Parse(time.RFC3339Nano, l.header(worker.HeaderFailedAt)); err == nil {
			at = parsed
		}
		object := l.Object
		if object == "" {
			object = "(" + l.header(worker.HeaderOriginalSubject) + ")"
		}
		t.row(strconv.FormatUint(l.Seq, 10), stamp(at), l.header(worker.HeaderStage), l.header(worker.HeaderDelivered), object, clip(l.header(worker.HeaderError), 160))
	}
	t.flush()
	fmt.Fprintf(w, "\n%s; see one with: strata deadletters show SEQ\n", plural(len(letters), "dead letter", "dead letters"))
}

func runDeadLettersShow(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "SEQ [--body] [--json]",
		"Shows one dead letter: its headers (stage, error, attempts, original subject, stream and sequence)\n"+
			"and its body, the original message (cut at 4 KiB; --body prints the whole body alone).")
	body := f.Bool("body", false, "print only the body, unchanged (e.g. to save or pipe it)")
	asJSON := f.Bool("json", false, "print the message as JSON (the body as text)")
	cf := addConnFlags(f, needNATS)
	pos, err := f.parse(a, args, 1, 1)
	if err != nil {
		return err
	}
	seq, err := parseSeq(pos[0])
	if err != nil {
		return err
	}
	dl, err := openDeadLetters(ctx, a, cf)
	if err != nil {
		return err
	}
	defer dl.Close()
	l, err := getLetter(ctx, dl.st, seq)
	if err != nil {
		return err
	}
	switch {
	case *body:
		_, err := a.stdout.Write(l.Data)
		return err
	case *asJSON:
		return printJSON(a.stdout, struct {
			letter
			Body string `json:"body"`
		}{l, string(l.Data)})
	}
	printLetter(a.stdout, l)
	return nil
}

func parseSeq(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, usagef("%q is not a dead letter's sequence (a number from strata deadletters list)", s)
	}
	return n, nil
}

func getLetter(ctx context.Context, st jetstream.Stream, seq uint64) (letter, error) {
	m, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return letter{}, fmt.Errorf("no dead letter %d", seq)
	}
	if err != nil {
		return letter{}, fmt.Errorf("dead letter %d: %w", seq, err)
	}
	return toLetter(m), nil
}

// maxShownBody is how much of a body show prints.
const maxShownBody = 4096

func printLetter(w io.Writer, l letter) {
	fmt.Fprintf(w, "Dead letter %d on %s, stored %s\n", l.Seq, l.Subject, stamp(l.Time))
	if l.Object != "" {
		fmt.Fprintf(w, "Object: %s\n", l.Object)
	}
	fmt.Fprintln(w, "Headers:")
	var keys []string
	for k := range l.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range l.Headers[k] {
			fmt.Fprintf(w, "  %s: %s\n", k, v)
		}
	}
	data := l.Data
	var pretty bytes.Buffer
	if json.Indent(&pretty, data, "", "  ") == nil {
		data = pretty.Bytes()
	}
	fmt.Fprintf(w, "Body (%s):\n", bytesText(int64(len(l.Data))))
	if len(data) > maxShownBody {
		fmt.Fprintf(w, "%s\n… (%s more; --body prints it all)\n", data[:maxShownBody], bytesText(int64(len(data)-maxShownBody)))
		return
	}
	fmt.Fprintf(w, "%s\n", bytes.TrimRight(data, "\n"))
}

func runDeadLettersRedrive(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "SEQ... | --all [--stage S] [--project P] [--delete]",
		"Re-drives dead letters after their cause is fixed: publishes each one's body, with its "+pipeline.HeaderKind+"\n"+
			"header, to its "+worker.HeaderOriginalSubject+", waiting until JetStream stored it (as the README's\n"+
			"`nats pub -J` does). All processing is idempotent. The dead letter stays unless --delete.")
	all := f.Bool("all", false, "re-drive every dead letter (with --stage/--project: every matching one)")
	stage := f.String("stage", "", "with --all: only this stage's")
	project := f.String("project", "", "with --all: only those about this project's objects")
	del := f.Bool("delete", false, "delete each dead letter once it is re-driven")
	cf := addConnFlags(f, needNATS)
	pos, err := f.parse(a, args, 0, -1)
	if err != nil {
		return err
	}
	switch {
	case *all && len(pos) > 0:
		return usagef("give sequences or --all, not both")
	case !*all && len(pos) == 0:
		return usagef("missing sequences: usage: %s %s", f.name, f.usage)
	case !*all && (*stage != "" || *project != ""):
		return usagef("--stage and --project select dead letters for --all")
	}
	var seqs []uint64
	for _, p := range pos {
		seq, err := parseSeq(p)
		if err != nil {
			return err
		}
		seqs = append(seqs, seq)
	}
	dl, err := openDeadLetters(ctx, a, cf)
	if err != nil {
		return err
	}
	defer dl.Close()
	var letters []letter
	if *all {
		if letters, err = recentLetters(ctx, dl.st, 0, letterFilter(*stage, *project)); err != nil {
			return err
		}
	}
	for _, seq := range seqs {
		l, err := getLetter(ctx, dl.st, seq)
		if err != nil {
			return err
		}
		letters = append(letters, l)
	}
	notRedriven, notDeleted := 0, 0
	for _, l := range letters {
		target, seq, err := redrive(ctx, dl.js, l)
		if err != nil {
			notRedriven++
			fmt.Fprintf(a.stdout, "dead letter %d: not re-driven: %s\n", l.Seq, oneLine(err.Error()))
			continue
		}
		fmt.Fprintf(a.stdout, "dead letter %d re-driven to %s (stored at sequence %d)\n", l.Seq, target, seq)
		if *del {
			if err := dl.st.DeleteMsg(ctx, l.Seq); err != nil {
				notDeleted++
				fmt.Fprintf(a.stdout, "dead letter %d: not deleted: %s\n", l.Seq, oneLine(err.Error()))
			}
		}
	}
	if len(letters) == 0 {
		fmt.Fprintln(a.stdout, "no dead letters to re-drive")
	}
	switch {
	case notRedriven > 0:
		return fmt.Errorf("%d of %d dead letters not re-driven", notRedriven, len(letters))
	case notDeleted > 0:
		return fmt.Errorf("%d of %d re-driven dead letters not deleted", notDeleted, len(letters))
	}
	return nil
}

// redrive publishes a dead letter's body with its Strata-Kind and
// Strata-Body-Ref headers to its original subject and returns where
// JetStream stored it.
func redrive(ctx context.Context, js jetstream.JetStream, l letter) (string, uint64, error) {
	subject := l.header(worker.HeaderOriginalSubject)
	if subject == "" {
		return "", 0, fmt.Errorf("no %s header", worker.HeaderOriginalSubject)
	}
	m := nats.NewMsg(subject)
	m.Data = l.Data
	if kind := l.header(pipeline.HeaderKind); kind != "" {
		m.Header.Set(pipeline.HeaderKind, kind)
	}
	if ref := l.header(pipeline.HeaderBodyRef); ref != "" { // a body sent by reference stays in the bucket
		m.Header.Set(pipeline.HeaderBodyRef, ref)
	}
	ack, err := js.PublishMsg(ctx, m)
	if err != nil {
		return "", 0, fmt.Errorf("publish to %s: %w", subject, err)
	}
	return subject, ack.Sequence, nil
}
