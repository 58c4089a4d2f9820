// Package mail reads an e-mail message (an .eml file: RFC 5322 headers
// and a MIME body) as a person reads it: the subject as its title and
// first heading, who wrote to whom and when, the body (the text part,
// else the HTML part through the HTML reader), a forwarded message under
// a heading of its own, and for each attachment a heading that names it
// and a line that says what it is. Base64 and quoted-printable are
// decoded, RFC 2047 words and RFC 2231 file names too, and text in other
// charsets (ISO-8859-*, Windows-125x, Shift_JIS, ...) is made UTF-8.
//
// Each attachment is read by its own format's reader into a document of
// its own, a member of the message's (package container) at its file name
// made safe ("notes.txt", or "attachment 3.pdf" for one without a name):
// <message>//<attachment>. Its line says so, or why it was not read.
//
// The message's from, to, cc, date and subject are its metadata, so that
// a search can be kept to one sender or a range of dates; its attachments
// keep their own (the ingestor gives them the message's as well).
package mail

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/container"
	"github.com/strata-kb/strata/ingestor/extract/htmltext"
)

// Format is the format name of a message.
const Format = "email"

// Bounds of one message: MIME nesting (a part inside a part), messages
// forwarded inside messages (and containers around them), and attachments
// read.
const (
	maxMIMEDepth      = 16
	maxForwardDepth   = container.MaxDepth
	maxAttachments    = container.MaxMembers
	maxHeaderValueLen = 4096
)

// Extractor reads messages.
type Extractor struct {
	// Attachment reads an attachment by its own format (the registry's
	// Extract, which detects it); nil names attachments without reading
	// them.
	Attachment container.Reader
}

// Extract reads one message.
func (x Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: not an e-mail message: its header does not parse", extract.ErrCorrupt)
	}
	r := &reading{x: x, ctx: ctx, lim: lim, b: extract.NewBuilder(Format).Within(lim)}
	props := extract.NewProps("message header")
	subject := r.decode(msg.Header.Get("Subject"))
	props.Text("subject", subject)
	for _, k := range []string{"From", "To", "Cc"} {
		if v := r.decode(msg.Header.Get(k)); v != "" {
			props.List(strings.ToLower(k), addresses(v))
		}
	}
	if d, err := msg.Header.Date(); err == nil {
		props.Date("date", d.UTC().Format(time.RFC3339))
	}
	if subject == "" {
		subject = "(no subject)"
	}
	r.b.SetTitle(subject)
	if err := r.message(textproto.MIMEHeader(msg.Header), msg.Body, subject, 1, 0, 0); err != nil {
		return nil, err
	}
	r.b.SetMetadata(props.Metadata())
	for _, w := range props.Warnings() {
		r.b.Warn(w)
	}
	if err := container.TooLong(r.b, r.lim); err != nil {
		return nil, err
	}
	return r.b.Finish()
}

// reading is one message's extraction.
type reading struct {
	x           Extractor
	ctx         context.Context
	lim         extract.Limits
	b           *extract.Builder
	attachments int
	expanded    int64 // decoded bytes of every part so far (MaxUncompressed)
}

// message adds a message's heading (its subject, at level), its header
// lines and its body.
func (r *reading) message(h textproto.MIMEHeader, body io.Reader, subject string, level, depth, forwards int) error {
	r.b.Add(extract.Heading, level, 0, subject)
	var lines []string
	for _, k := range []string{"From", "To", "Cc", "Date"} {
		if v := r.decode(h.Get(k)); v != "" {
			lines = append(lines, k+": "+v)
		}
	}
	r.b.Add(extract.Paragraph, 0, 0, strings.Join(lines, "\n"))
	if err := r.part(h, body, level, depth, forwards); err != nil {
		return err
	}
	return r.b.Err()
}

// part adds one MIME part: a body's text, the parts of a multipart, a
// forwarded message or an attachment.
func (r *reading) part(h textproto.MIMEHeader, body io.Reader, level, depth, forwards int) error {
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	if depth > maxMIMEDepth {
		r.b.Warn(fmt.Sprintf("MIME parts nested deeper than %d were not read", maxMIMEDepth))
		return nil
	}
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mediaType, params = "text/plain", map[string]string{}
	}
	disposition, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := fileName(r.decode(dparams["filename"]), r.decode(params["name"]))
	switch {
	case strings.HasPrefix(mediaType, "multipart/"):
		return r.multipart(body, mediaType, params["boundary"], level, depth, forwards)
	case disposition == "attachment" || (name != "" && !strings.HasPrefix(mediaType, "text/")):
		return r.attachment(h, body, name, mediaType, level)
	case mediaType == "message/rfc822":
		return r.forwarded(h, body, level, depth, forwards)
	case mediaType == "text/html":
		data, err := r.decodedText(h, body, params["charset"])
		if err != nil {
			return err
		}
		return r.html(data, level)
	case strings.HasPrefix(mediaType, "text/"):
		data, err := r.decodedText(h, body, params["charset"])
		if err != nil {
			return err
		}
		r.text(string(data))
		if err := container.TooLong(r.b, r.lim); err != nil {
			return err
		}
		return r.b.Err()
	}
	return r.attachment(h, body, name, mediaType, level)
}

// multipart adds the parts of a multipart body: every one, or of
// alternatives the plain text one (else the HTML one, else the first).
func (r *reading) multipart(body io.Reader, mediaType, boundary string, level, depth, forwards int) error {
	if boundary == "" {
		r.b.Warn(mediaType + " without a boundary: its parts were not read")
		return nil
	}
	mr := multipart.NewReader(body, boundary)
	type part struct {
		h    textproto.MIMEHeader
		data []byte
	}
	var alternatives []part
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			r.b.Warn(fmt.Sprintf("%s cut short: %s", mediaType, container.Reason(err.Error())))
			break
		}
		if mediaType != "multipart/alternative" {
			if err := r.part(p.Header, p, level, depth+1, forwards); err != nil {
				return err
			}
			continue
		}
		data, err := r.read(p)
		if err != nil {
			return err
		}
		alternatives = append(alternatives, part{p.Header, data})
	}
	if len(alternatives) == 0 {
		return nil
	}
	best := alternatives[0]
	for _, want := range []string{"text/html", "text/plain"} { // the later the better
		for _, a := range alternatives {
			if t, _, _ := mime.ParseMediaType(a.h.Get("Content-Type")); t == want {
				best = a
				break
			}
		}
	}
	return r.part(best.h, bytes.NewReader(best.data), level, depth+1, forwards)
}

// forwarded adds a message inside the message under a heading one level
// down.
func (r *reading) forwarded(h textproto.MIMEHeader, body io.Reader, level, depth, forwards int) error {
	data, err := r.decoded(h, body)
	if err != nil {
		return err
	}
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil || forwards+container.Depth(r.ctx) >= maxForwardDepth {
		why := fmt.Sprintf("forwarded deeper than %d", maxForwardDepth)
		if err != nil {
			why = container.Reason(err.Error())
		}
		r.b.Warn("a forwarded message was not read: " + why)
		return nil
	}
	subject := r.decode(msg.Header.Get("Subject"))
	if subject == "" {
		subject = "(no subject)"
	}
	return r.message(textproto.MIMEHeader(msg.Header), msg.Body, "Forwarded: "+subject, min(level+1, 6), depth+1, forwards+1)
}

// attachment adds a heading naming the attachment and a line saying what
// it is, and the attachment, read by its own format's reader, as a member
// of the message at its name; what cannot be read is said under it.
func (r *reading) attachment(h textproto.MIMEHeader, body io.Reader, name, mediaType string, level int) error {
	r.attachments++
	if r.attachments > maxAttachments {
		if r.attachments == maxAttachments+1 {
			r.b.Warn(fmt.Sprintf("attachments after the first %d were not read", maxAttachments))
		}
		return nil
	}
	if name == "" {
		name = fmt.Sprintf("attachment %d", r.attachments)
		if exts, _ := mime.ExtensionsByType(mediaType); len(exts) > 0 {
			name += exts[0]
		}
	}
	heading, lvl := "Attachment: "+name, min(level+1, 6)
	if !container.Room(r.b, r.lim, heading) {
		r.b.Warn(fmt.Sprintf("attachment %s not read: the message's text reached its limit (MaxTextBytes or MaxFileBytes)", name))
		return nil
	}
	data, err := r.decoded(h, body)
	if err != nil {
		return err
	}
	notRead := func(why string) error {
		container.NotRead(r.b, r.lim, lvl, heading, fmt.Sprintf("%s, %d bytes, not read: %s", mediaType, len(data), why))
		r.b.Warn(fmt.Sprintf("attachment %s not read: %s", name, why))
		return r.b.Err()
	}
	switch {
	case r.x.Attachment == nil:
		r.b.Add(extract.Heading, lvl, 0, heading)
		r.b.Add(extract.Paragraph, 0, 0, fmt.Sprintf("%s, %d bytes (not read)", mediaType, len(data)))
		return r.b.Err()
	case container.TooDeep(r.ctx):
		return notRead(fmt.Sprintf("messages nest deeper than %d", maxForwardDepth))
	}
	doc, why, err := container.Read(r.ctx, r.x.Attachment, data, name, container.Left(r.ctx, r.lim, r.b, r.expanded))
	switch {
	case err != nil:
		return err
	case doc == nil:
		return notRead(why)
	case !container.AddMember(r.b, r.lim, lvl, heading, fmt.Sprintf("%s, %d bytes", mediaType, len(data)), name, doc):
		return notRead("it does not fit what the message has left of its text and budget (MaxTextBytes or MaxFileBytes)")
	}
	return r.b.Err()
}

// html adds an HTML body read by the HTML reader, its headings under the
// message's.
func (r *reading) html(data []byte, level int) error {
	doc, err := htmltext.Extractor{}.Extract(r.ctx, data, "body.html", container.Left(r.ctx, r.lim, r.b, r.expanded))
	if err != nil {
		if errors.Is(err, extract.ErrTooLarge) {
			return err
		}
		r.b.Warn("the HTML body was not read: " + container.Reason(err.Error()))
		return nil
	}
	container.Include(r.b, doc, level, "the HTML body")
	if err := container.TooLong(r.b, r.lim); err != nil {
		return err
	}
	return r.b.Err()
}

// text adds a plain text body, a paragraph for each run of lines between
// blank lines.
func (r *reading) text(s string) {
	s = container.Clean(s)
	for _, para := range strings.Split(s, "\n\n") {
		if r.b.Add(extract.Paragraph, 0, 0, strings.TrimSpace(para)) < 0 && r.b.Err() != nil || container.TooLong(r.b, r.lim) != nil {
			return
		}
	}
}

// decodedText is a text part's body, decoded and made UTF-8 from its
// charset.
func (r *reading) decodedText(h textproto.MIMEHeader, body io.Reader, charset string) ([]byte, error) {
	data, err := r.decoded(h, body)
	if err != nil {
		return nil, err
	}
	return utf8Text(data, charset), nil
}

// decoded is a part's body with its transfer encoding undone, its bytes
// as they are (an attachment's).
func (r *reading) decoded(h textproto.MIMEHeader, body io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, &base64Text{r: body})
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	return r.read(body)
}

// read reads a part within what the message may expand to.
func (r *reading) read(body io.Reader) ([]byte, error) {
	budget := r.lim.MaxUncompressed - r.expanded
	if r.lim.MaxUncompressed <= 0 {
		budget = 1 << 62
	}
	data, err := io.ReadAll(io.LimitReader(body, budget+1))
	r.expanded += int64(len(data))
	if int64(len(data)) > budget {
		return nil, fmt.Errorf("%w: the message's parts expand past %d bytes (MaxUncompressed)", extract.ErrTooLarge, r.lim.MaxUncompressed)
	}
	if err != nil {
		r.b.Warn("a part was cut short: " + container.Reason(err.Error()))
	}
	return data, nil
}

// base64Text passes base64 text on without what mail puts between its
// lines besides line ends (spaces, tabs), which the decoder refuses.
type base64Text struct{ r io.Reader }

func (b *base64Text) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	out := p[:0]
	for _, c := range p[:n] {
		if c != ' ' && c != '\t' {
			out = append(out, c)
		}
	}
	return len(out), err
}

// decode undoes RFC 2047 encoded words in a header value, cut to a
// length a header needs, as one line of clean text (extract.PropText).
func (r *reading) decode(s string) string {
	if len(s) > maxHeaderValueLen {
		s = s[:maxHeaderValueLen]
	}
	dec := mime.WordDecoder{CharsetReader: charsetReader}
	if d, err := dec.DecodeHeader(s); err == nil {
		s = d
	}
	return extract.PropText(s)
}

// charsetReader makes text in a named charset UTF-8.
func charsetReader(charset string, in io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, err
	}
	return enc.NewDecoder().Reader(in), nil
}

// utf8Text is data in charset made UTF-8 (as it is when the charset is
// unknown or UTF-8 already, invalid bytes replaced).
func utf8Text(data []byte, charset string) []byte {
	if charset != "" && !strings.EqualFold(charset, "utf-8") && !strings.EqualFold(charset, "us-ascii") {
		if enc, err := htmlindex.Get(charset); err == nil {
			if out, err := enc.NewDecoder().Bytes(data); err == nil {
				data = out
			}
		}
	}
	return bytes.ToValidUTF8(data, []byte("\uFFFD"))
}

// fileName is an attachment's name, the first given of names: its last
// path element (a name never leads anywhere), without control or format
// characters (bidi overrides).
func fileName(names ...string) string {
	for _, n := range names {
		if n = container.MemberName(n); n != "" {
			return n
		}
	}
	return ""
}

// addresses splits an address header into its addresses, as written
// ("Ada <ada@example.com>"), or the whole value when it does not parse.
func addresses(v string) []string {
	list, err := mail.ParseAddressList(v)
	if err != nil {
		return []string{v}
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		if a.Name == "" {
			out = append(out, a.Address)
		} else {
			out = append(out, a.Name+" <"+a.Address+">")
		}
	}
	return out
}
