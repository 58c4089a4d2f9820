package tools

// The Knowledge Stack tool view_chunk_image: the picture a chunk was cut from.

import (
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

const viewChunkImageDescription = "Fetch the original image for a chunk that has a visual asset (image or table screenshot). " +
	"Returns the image with a text description (the chunk's text, page and document)."

//go:embed schemas/view_chunk_image.input.json
var viewChunkImageInput string

var viewChunkImageTool = define(ToolsetKnowledge, "view_chunk_image", viewChunkImageDescription, viewChunkImageInput, (*Tools).viewChunkImage)

type viewChunkImageArgs struct {
	ChunkID string `json:"chunk_id"`
}

// chunkImageOut is view_chunk_image's structured answer; the picture itself
// is the image content beside it.
type chunkImageOut struct {
	ChunkID      string   `json:"chunk_id"`
	MIMEType     string   `json:"mime_type"`
	Bytes        int      `json:"bytes"`
	Kind         string   `json:"kind"`
	Description  string   `json:"description"` // the chunk's text (caption, alt text or extracted text)
	DocumentID   string   `json:"document_id"`
	DocumentPath string   `json:"document_path"`
	SectionID    string   `json:"section_id,omitempty"`
	HeadingPath  []string `json:"heading_path"`
	PageStart    int      `json:"page_start,omitempty"`
	PageEnd      int      `json:"page_end,omitempty"`
}

// chunkImage is view_chunk_image's answer: its structured content is meta;
// its content the picture's description (text) and the picture itself.
type chunkImage struct {
	meta chunkImageOut
	data []byte
	text string
}

func (img *chunkImage) toolResult() (*mcp.CallToolResult, error) {
	res, err := structured(img.meta)
	if err != nil {
		return nil, err
	}
	res.Content = []mcp.Content{
		mcp.NewTextContent(img.text),
		mcp.NewImageContent(base64.StdEncoding.EncodeToString(img.data), img.meta.MIMEType),
	}
	return res, nil
}

func (t *Tools) viewChunkImage(ctx context.Context, p auth.Principal, a viewChunkImageArgs) (any, error) {
	id, err := idArg("chunk_id", a.ChunkID)
	if err != nil {
		return nil, err
	}
	n, err := t.resolveChunk(ctx, p, id, "a chunk: view_chunk_image takes the id of a chunk with has_image true")
	if err != nil {
		return nil, err
	}
	ch := n.chunk
	if ch.ImageRef == "" {
		return nil, userErrorf("chunk %s is a %s chunk without an image: use read to read its text", ch.ID, chunkView(*ch).Kind)
	}
	images := t.images
	if images == nil {
		return nil, userErrorf("images are not available on this server; read the chunk's text with read")
	}
	_, key, err := store.ParseImageRef(ch.ImageRef)
	if err != nil || !strings.HasPrefix(key, n.project+"/") {
		return nil, fmt.Errorf("chunk %s of %s has image_ref %q outside its project", ch.ID, n.project, ch.ImageRef)
	}
	data, err := images.ReadImage(ctx, ch.ImageRef, MaxImageBytes)
	if errors.Is(err, store.ErrImageTooLarge) || len(data) > MaxImageBytes {
		return nil, userErrorf("the image of chunk %s is larger than %d MiB; read its text with read", ch.ID, MaxImageBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", ch.ImageRef, err)
	}
	mime := strings.ToLower(strings.TrimSpace(ch.ImageMIME))
	if !strings.HasPrefix(mime, "image/") {
		mime = http.DetectContentType(data)
	}
	if !strings.HasPrefix(mime, "image/") {
		return nil, userErrorf("the stored asset of chunk %s is not an image (%s)", ch.ID, mime)
	}
	out := &chunkImage{data: data, meta: chunkImageOut{
		ChunkID: ch.ID, MIMEType: mime, Bytes: len(data), Kind: chunkView(*ch).Kind, Description: ch.Content,
		DocumentID: ch.FileID, DocumentPath: absPath(n.project, ch.FilePath), SectionID: ch.SectionID,
		HeadingPath: nonNilStrings(ch.HeadingPath), PageStart: ch.PageStart, PageEnd: ch.PageEnd,
	}}
	var b strings.Builder
	fmt.Fprintf(&b, "Image of chunk %d (%s)", ch.Index, out.meta.Kind)
	switch {
	case ch.PageStart > 0 && ch.PageEnd > ch.PageStart:
		fmt.Fprintf(&b, " on pages %d-%d", ch.PageStart, ch.PageEnd)
	case ch.PageStart > 0:
		fmt.Fprintf(&b, " on page %d", ch.PageStart)
	}
	fmt.Fprintf(&b, " of %s", out.meta.DocumentPath)
	if len(ch.HeadingPath) > 0 {
		fmt.Fprintf(&b, " (section %s)", strings.Join(ch.HeadingPath, " > "))
	}
	fmt.Fprintf(&b, "; %s, %d bytes.", mime, len(data))
	if ch.Content != "" {
		b.WriteString("\n\n" + ch.Content)
	}
	out.text = b.String()
	return out, nil
}
