// Package mbox reads a mailbox (an .mbox file: messages one after another,
// each after a "From " line) as a person reads one: the list of its
// messages (who wrote, when, about what), and each message read by the
// mail reader (package mail, through the registry: its subject, its body,
// its attachments) into a document of its own, a member of the mailbox's
// (package container) at message-N.eml, N its place in the list; its
// attachments are members of the message's. At most container.MaxMembers
// messages are listed and read. A body line that a mailbox escaped
// (">From ", mboxrd) is given back as written.
package mbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/container"
)

// Format is the format name of a mailbox.
const Format = "mbox"

// Extractor reads mailboxes.
type Extractor struct {
	// Message reads one message (the registry's Extract, which reads a
	// name ending in .eml as e-mail); nil lists the messages only.
	Message container.Reader
}

// Extract reads one mailbox.
func (x Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	if err := container.Nested(ctx); err != nil {
		return nil, err
	}
	msgs := Split(data)
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: not a mailbox: no message starts with a \"From \" line", extract.ErrCorrupt)
	}
	b := extract.NewBuilder(Format).Within(lim)
	title := container.MemberName(name)
	if title == "" {
		title = "mailbox"
	}
	b.SetTitle(title)
	b.Add(extract.Heading, 1, 0, title)
	if len(msgs) > container.MaxMembers {
		b.Warn(fmt.Sprintf("%d messages after the first %d were neither listed nor read", len(msgs)-container.MaxMembers, container.MaxMembers))
		msgs = msgs[:container.MaxMembers]
	}
	b.Add(extract.Heading, 2, 0, "Messages")
	lines := make([]string, len(msgs))
	for i, m := range msgs {
		lines[i] = fmt.Sprintf("%d. %s", i+1, summary(m))
	}
	b.Add(extract.Paragraph, 0, 0, strings.Join(lines, "\n"))
	var read int64 // bytes of the messages read so far: what their parts decode to is no more
	for i, m := range msgs {
		if err := container.TooLong(b, lim); err != nil {
			return nil, err
		}
		if container.OutOfTime(ctx) {
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) && ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
			}
			b.Warn(fmt.Sprintf("messages from %d on were not read: the mailbox's time ran out", i+1))
			break
		}
		label, heading := fmt.Sprintf("message %d", i+1), fmt.Sprintf("Message %d", i+1)
		if !container.Room(b, lim, heading) {
			b.Warn(container.Cut("messages", fmt.Sprint(i+1)))
			break
		}
		if x.Message == nil {
			b.Add(extract.Heading, 2, 0, heading)
			b.Add(extract.Paragraph, 0, 0, fmt.Sprintf("%d bytes (not read)", len(m)))
			continue
		}
		doc, why, err := container.Read(ctx, x.Message, m, MessagePath(i+1), container.Left(ctx, lim, b, read))
		if err != nil {
			return nil, err
		}
		read += int64(len(m))
		if doc != nil {
			// The list names the message: it is a member, without a heading.
			if container.AddMember(b, lim, 2, "", "", MessagePath(i+1), doc) {
				if err := b.Err(); err != nil {
					return nil, err
				}
				continue
			}
			why = "it does not fit what the mailbox has left of its text and budget (MaxTextBytes or MaxFileBytes)"
		}
		container.NotRead(b, lim, 2, heading, fmt.Sprintf("%d bytes, not read: %s", len(m), why))
		b.Warn(fmt.Sprintf("%s not read: %s", label, why))
	}
	if err := container.TooLong(b, lim); err != nil {
		return nil, err
	}
	if err := b.Err(); err != nil {
		return nil, err
	}
	return b.Finish()
}

// MessagePath is the path of the nth message (from 1) in its mailbox:
// message-n.eml.
func MessagePath(n int) string { return fmt.Sprintf("message-%d.eml", n) }

// Split cuts a mailbox into its messages: each starts after a line that
// begins with "From " at the start of the file (after a byte-order mark)
// or after a blank line (the separator, left out); a "From " line inside a
// paragraph of a body that no writer escaped is body text. In each
// message, a body line escaped as ">From " (or ">>From ", mboxrd) loses
// one '>'. What comes before the first separator is not a message.
func Split(data []byte) [][]byte {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var msgs [][]byte
	start := -1
	blank := true // the start of the file counts as after a blank line
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		line := data[i:next]
		if blank && bytes.HasPrefix(line, []byte("From ")) {
			if start >= 0 {
				msgs = append(msgs, unescape(data[start:i]))
			}
			start = next
		}
		blank = len(bytes.TrimRight(line, "\r\n")) == 0
		i = next
	}
	if start >= 0 && start <= len(data) {
		msgs = append(msgs, unescape(data[start:]))
	}
	out := msgs[:0]
	for _, m := range msgs {
		if len(bytes.TrimSpace(m)) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// unescape gives back the body lines a mailbox escaped: ">From " (after
// any number of '>') loses one '>'.
func unescape(m []byte) []byte {
	if !bytes.Contains(m, []byte(">From ")) {
		return m
	}
	lines := bytes.SplitAfter(m, []byte("\n"))
	for i, l := range lines {
		t := bytes.TrimLeft(l, ">")
		if len(t) < len(l) && bytes.HasPrefix(t, []byte("From ")) {
			lines[i] = l[1:]
		}
	}
	return bytes.Join(lines, nil)
}

// summary is a message's line in the list: its subject, who wrote it and
// when, as its header says (RFC 2047 words decoded).
func summary(m []byte) string {
	msg, err := mail.ReadMessage(bytes.NewReader(m))
	if err != nil {
		return "(a message whose header does not parse)"
	}
	dec := mime.WordDecoder{}
	get := func(k string) string {
		v := msg.Header.Get(k)
		if len(v) > 512 {
			v = v[:512]
		}
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		return extract.PropText(v)
	}
	subject := get("Subject")
	if subject == "" {
		subject = "(no subject)"
	}
	parts := []string{subject}
	if from := get("From"); from != "" {
		parts = append(parts, "from "+from)
	}
	if date := get("Date"); date != "" {
		parts = append(parts, date)
	}
	return strings.Join(parts, ", ")
}
