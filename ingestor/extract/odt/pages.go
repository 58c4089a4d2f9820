package odt

// Page numbers.
//
// An ODT has no layout, but LibreOffice (and OpenOffice) record where it
// broke pages when the file was saved: office:text says
// text:use-soft-page-breaks="true", and a text:soft-page-break marks
// each page that began because the one before was full, where it began
// (before a paragraph, inside one, between table rows or list items).
// Pages the author started are not marked: they are in the styles, as
// fo:break-before="page" or fo:break-after="page" on a paragraph's or
// table's style (its own or inherited) or a master page named by the
// style (style:master-page-name).
//
// So when a file says it records soft page breaks, every block is on the
// page its first content is on: page 1, one more at each soft break and
// each page break of a style (a break before the first content of a page
// is that page's, not another: a document's first paragraph may well say
// break-before). Document.Pages is the page the body ends on; footnotes,
// endnotes, comments, headers and footers, written after the body, are
// on that page too. A file that does not record soft page breaks
// (written by another tool, which did no layout) has no pages: 0, never
// guessed from explicit breaks alone, as for DOCX.
//
// Pages beyond Limits.MaxPages are not read: the body stops at the
// first block that starts past it, with a warning.

// pager follows the page of the body's text flow.
type pager struct {
	page  int
	fresh bool // nothing laid out on page since it began
	after bool // a break-after is due before the next content
}

func newPager() *pager { return &pager{page: 1, fresh: true} }

// breakBefore: a paragraph or table whose style starts a page, or a soft
// page break.
func (p *pager) breakBefore() {
	if p.after || !p.fresh {
		p.page++
	}
	p.after, p.fresh = false, true
}

// soft: a text:soft-page-break.
func (p *pager) soft() { p.breakBefore() }

// breakAfter: a paragraph or table whose style ends its page.
func (p *pager) breakAfter() { p.after = true }

// laidOut marks content laid out where the flow is, and returns its page.
func (p *pager) laidOut() int {
	if p.after {
		p.page++
		p.after = false
	}
	p.fresh = false
	return p.page
}

// current is the page of the flow, without laying anything out.
func (p *pager) current() int { return p.page }
