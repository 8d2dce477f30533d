package web

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/templates"
)

// The block inspector: GET /api/images/{id}/blocks/{addr} (imgio.BlockInfo as JSON) and the page
// /images/{id}/blocks/{addr}; GET /images/{id}/blocks?addr= is the "go to block" form's target.

// parseBlockAddr reads a block address: decimal, or hex with a 0x prefix.
func parseBlockAddr(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	base, digits := 10, s
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		base, digits = 16, s[2:]
	}
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil || digits == "" {
		return 0, badParam("addr", strconv.Quote(s)+" is not a block address (decimal, or hex with 0x; at most 0xffffffff)")
	}
	return uint32(v), nil
}

// inspectBlock resolves {id} and {addr} and inspects the block.
func (s *Server) inspectBlock(r *http.Request) (*StoredImage, imgio.BlockInfo, error) {
	addr, err := parseBlockAddr(chi.URLParam(r, "addr"))
	if err != nil {
		return nil, imgio.BlockInfo{}, err
	}
	// The routes under {id} hold the image (holdImage) while the handler runs.
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		return nil, imgio.BlockInfo{}, err
	}
	b, err := si.Image.Block(r.Context(), addr)
	return si, b, err
}

// handleBlock answers GET /api/images/{id}/blocks/{addr}.
func (s *Server) handleBlock(w http.ResponseWriter, r *http.Request) {
	_, b, err := s.inspectBlock(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// handleBlockGoto answers the "go to block" form, GET /images/{id}/blocks?addr=, with a redirect.
func (s *Server) handleBlockGoto(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	addr, err := parseBlockAddr(r.URL.Query().Get("addr"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, templates.BlockURL(si.ID, addr), http.StatusSeeOther)
}

// handleBlockPage serves GET /images/{id}/blocks/{addr}.
func (s *Server) handleBlockPage(w http.ResponseWriter, r *http.Request) {
	si, b, err := s.inspectBlock(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.Block(blockPage(s, si, b)))
}

// blockPage turns an imgio.BlockInfo into the page's plain values.
func blockPage(s *Server, si *StoredImage, b imgio.BlockInfo) templates.BlockPage {
	v := si.Image.Volume()
	bs := int64(v.BlockSize)
	p := templates.BlockPage{
		Layout: s.layout(fmt.Sprintf("block %d", b.Addr), "js/block.js", imageCrumb(si, true),
			templates.Crumb{Label: fmt.Sprintf("block %d", b.Addr)}),
		ID: si.ID, Addr: b.Addr, Area: b.Area, Kind: b.Kind,
		MaxAddr: uint64(si.Image.Size() / max(bs, 1)),
	}
	if b.Data != nil {
		p.Hex = hex.EncodeToString(b.Data)
	}
	if b.Addr > 0 {
		p.PrevHref = templates.BlockURL(si.ID, b.Addr-1)
	}
	if uint64(b.Addr)+1 < p.MaxAddr {
		p.NextHref = templates.BlockURL(si.ID, b.Addr+1)
	}
	if b.Segno != nil {
		rel := b.Addr - v.MainBlkaddr
		p.Facts = append(p.Facts, templates.KV{Key: "segment", Value: fmt.Sprintf("%d, block %d of %d", *b.Segno, rel%v.BlocksPerSeg, v.BlocksPerSeg),
			Title: "segno = (addr − main_blkaddr) / blocks per segment"})
		p.SegHref = fmt.Sprintf("/images/%s#seg=%d", si.ID, *b.Segno)
	}
	if b.Valid != nil {
		p.Facts = append(p.Facts, templates.KV{Key: "SIT bit", Value: map[bool]string{true: "set: the block is valid", false: "clear: the block is free"}[*b.Valid],
			Title: "the block's bit in its segment's SIT valid_map"})
	}
	if e := b.SSA; e != nil {
		where := fmt.Sprintf("stored in %s block %d at byte %d", map[string]string{"ssa": "SSA", "checkpoint": "checkpoint"}[e.Source], e.Blkaddr, e.Offset)
		if e.Source == "none" {
			where = "none stored: the block lies past its current segment's next free block"
		}
		p.Facts = append(p.Facts, templates.KV{Key: "summary entry", Value: fmt.Sprintf("nid %d, ofs_in_node %d, version %d — %s", e.Nid, e.OfsInNode, e.Version, where),
			Title: "struct f2fs_summary: the node that owns the block and, for data, the slot in it"})
	}
	if o := b.Owner; o != nil {
		path := o.DisplayPath()
		switch {
		case o.Index != nil:
			p.OwnerText = fmt.Sprintf("%s, file block %d (inode %d)", path, *o.Index, o.Ino)
			if o.Path != "" {
				p.OwnerHref = templates.FileSlotURL(si.ID, o.Path, *o.Index)
			}
		case o.Nid != nil:
			p.OwnerText = fmt.Sprintf("%s, node %d (inode %d)", path, *o.Nid, o.Ino)
			if o.Path != "" {
				p.OwnerHref = templates.FileURL(si.ID, o.Path)
			}
		}
	}
	links := map[string]uint32{}
	for _, l := range b.Links {
		if _, dup := links[l.Name]; !dup {
			links[l.Name] = l.Addr
		}
	}
	named := map[string]bool{}
	for _, f := range b.Fields {
		named[f.Name] = true
	}
	// A link that belongs to a field is shown on the field's row; the list holds the others (the
	// blocks this one is pointed from, its SIT and summary entries).
	for _, l := range b.Links {
		if !named[l.Name] {
			p.Links = append(p.Links, templates.BlockLinkItem{Name: l.Name, Addr: l.Addr, Href: templates.BlockURL(si.ID, l.Addr)})
		}
	}
	for _, f := range b.Fields {
		if f.Name == "role" {
			if p.Role != "" {
				p.Role += "; "
			}
			p.Role += f.Value
			continue
		}
		bf := templates.BlockField{Name: f.Name, Offset: f.Offset, Size: f.Size, Value: f.Value}
		if a, ok := links[f.Name]; ok {
			bf.Href, bf.Target = templates.BlockURL(si.ID, a), fmt.Sprintf("block %d", a)
		}
		p.Fields = append(p.Fields, bf)
	}
	start := int64(b.Addr) * bs
	for _, pr := range b.Problems {
		bp := templates.BlockProblem{Message: pr.Message}
		for _, o := range pr.Offsets {
			if o >= start && o < start+bs {
				bp.Offsets = append(bp.Offsets, int(o-start))
			}
		}
		p.Problems = append(p.Problems, bp)
	}
	return p
}
