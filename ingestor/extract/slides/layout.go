package slides

// placeholders are the positions of the placeholders of a slide layout
// or master, which a slide's placeholders inherit when they give none
// (PowerPoint writes no position for a placeholder left where its
// layout puts it).
type placeholders struct {
	byIdx, byType map[string]*shape
	master        string // the layout's master part; "" for a master
}

// placeFromLayout gives the placeholders among shapes that have no
// position of their own that of their layout's placeholder (matched by
// index, else by type), or of the master's (by type).
func (x *extraction) placeFromLayout(shapes []*shape, layout string) error {
	for _, s := range shapes {
		if err := x.placeFromLayout(s.children, layout); err != nil {
			return err
		}
		if s.placed || s.ph == "" || layout == "" {
			continue
		}
		l, err := x.placeholders(layout)
		if err != nil {
			return err
		}
		p := l.byIdx[s.phIdx]
		if p == nil || s.phIdx == "" {
			p = l.byType[s.ph]
		}
		if p == nil && l.master != "" {
			m, err := x.placeholders(l.master)
			if err != nil {
				return err
			}
			p = m.byType[masterType(s.ph)]
		}
		if p != nil {
			s.y, s.x, s.placed = p.y, p.x, true
		}
	}
	return nil
}

// masterType is the master placeholder a slide placeholder of type typ
// inherits from: a master has only title, body and the footer types.
func masterType(typ string) string {
	switch typ {
	case "ctrTitle":
		return "title"
	case "subTitle", "obj", "tbl", "chart", "dgm", "media", "clipArt", "pic":
		return "body"
	}
	return typ
}

// placeholders reads the placed placeholders of a layout or master part,
// once per part however many slides use it. A part that is missing or
// broken has none.
func (x *extraction) placeholders(part string) (*placeholders, error) {
	if l, ok := x.layouts[part]; ok {
		return l, nil
	}
	l := &placeholders{byIdx: map[string]*shape{}, byType: map[string]*shape{}}
	x.layouts[part] = l
	rels, err := x.rels(part)
	if err != nil {
		return nil, err
	}
	l.master = relOfType(rels, "/slideMaster")
	w := &pptxWalker{c: &collector{x: x}, noText: true}
	if err := x.readOptional(part, w.run); err != nil {
		return nil, err
	}
	var walk func([]*shape)
	walk = func(shapes []*shape) {
		for _, s := range shapes {
			walk(s.children)
			if !s.placed || s.ph == "" {
				continue
			}
			if _, dup := l.byIdx[s.phIdx]; !dup && s.phIdx != "" {
				l.byIdx[s.phIdx] = s
			}
			if _, dup := l.byType[s.ph]; !dup {
				l.byType[s.ph] = s
			}
		}
	}
	walk(w.c.top)
	return l, nil
}
