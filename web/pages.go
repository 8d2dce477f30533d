package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/templates"
)

// The page handlers turn imgio values into the plain values of package
// templates; the pages' scripts fetch the rest (segments, the run) from
// the JSON API and the websocket.

// render writes a templ component as an HTML page with status code. The
// page is rendered into memory first, so a failure is a clean 500 rather
// than half a page under a 200.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, c templ.Component) {
	var b bytes.Buffer
	// Rendered into memory whatever the request's context says: an error page for work its
	// deadline cut (503) is rendered after that deadline; the write has a deadline of its own.
	if err := c.Render(context.WithoutCancel(r.Context()), &b); err != nil {
		s.log.Error("render page", "path", r.URL.Path, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// pageError renders err as an HTML error page with the status s.Error
// would give it, so a browser sees a page and not a JSON body.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := s.errorStatus(err)
	if retryAfterHeader(w, err, code) {
		s.log.Debug("page refused", "path", r.URL.Path, "err", err)
	} else if code >= 500 {
		s.log.Error("page failed", "path", r.URL.Path, "err", err)
	}
	s.render(w, r, code, templates.Error(templates.ErrorPage{
		Layout:  s.layout(http.StatusText(code), ""),
		Status:  code,
		Message: msg,
	}))
}

// layout is what every page shares: its title, entry module, crumbs and the contract its modules
// read (contract.go).
func (s *Server) layout(title, script string, crumbs ...templates.Crumb) templates.Layout {
	c := newPageContract()
	if s.cfg.Static {
		c.Transport = transportWorker
	}
	return templates.Layout{Title: title, Assets: s.assets, Script: script, Crumbs: crumbs, Contract: c, Static: s.cfg.Static}
}

// imageCrumb names an image in the breadcrumb, linked unless it is the
// current page.
func imageCrumb(si *StoredImage, link bool) templates.Crumb {
	c := templates.Crumb{Label: si.Name}
	if link {
		c.Href = "/images/" + si.ID
	}
	return c
}

// handleImagesPage serves GET /: the loaded images and the upload area.
func (s *Server) handleImagesPage(w http.ResponseWriter, r *http.Request) {
	p := templates.ImagesPage{
		Layout:    s.layout("Images", "js/images.js", templates.Crumb{Label: "images"}),
		MaxUpload: s.cfg.MaxUpload,
	}
	for _, si := range s.images() {
		p.Images = append(p.Images, templates.ImageItem{
			ID: si.ID, Name: si.Name, Size: si.Size, Format: string(si.Format),
			Added: si.Added.UTC().Format("2006-01-02 15:04:05"), Demo: si.ID == DemoID, Upload: si.Upload,
			Local: isLocalID(si.ID),
		})
	}
	p.Tour = s.tour()
	s.render(w, r, http.StatusOK, templates.Images(p))
}

// tour is the README's five-minute demo: links into the demo image, offered only for the files the
// demo holds (TestBrowserReadmeDemo follows the README's steps through them).
func (s *Server) tour() []templates.Link {
	si, err := s.image(DemoID)
	if err != nil {
		return nil
	}
	steps := []struct{ label, path, mode, note string }{
		{"The demo image", "", "", "its segment map shows where the files live"},
		{"/seed/bench64.bin, both modes", "/seed/bench64.bin", "both", "64 MiB in 3 physical runs and 17 dnode chunks: 16,384 calls against 19"},
		// Both modes, as the tree's "zero ▸" opens it: the README's demo presses n twice to reach
		// the NEW_ADDR stop, with per-block's 24 calls beside batched's 1.
		{"/cases/prealloc.bin", "/cases/prealloc.bin", "both", "NEW_ADDR slots between written pages do not end a run"},
		{"/cases/fragmented.bin", "/cases/fragmented.bin", "both", "64 runs of 4 blocks: the saving shrinks with fragmentation"},
	}
	var out []templates.Link
	for _, st := range steps {
		if st.path == "" {
			out = append(out, templates.Link{Label: st.label, Href: "/images/" + DemoID, Note: st.note})
			continue
		}
		f, err := si.Image.Lookup(st.path)
		if err != nil {
			continue
		}
		out = append(out, templates.Link{Label: st.label, Note: st.note,
			Href: templates.RunURL(DemoID, st.path, 0, max(f.Inode().Size, 1), st.mode, -1)})
	}
	return out
}

// handleImagePage serves GET /images/{id}: summary, segment map, tree.
func (s *Server) handleImagePage(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v := si.Image.Volume()
	p := templates.ImagePage{
		Layout:       s.layout(si.Name, "js/image.js", imageCrumb(si, false)),
		ID:           si.ID,
		Name:         si.Name,
		Features:     v.Features,
		MainSegments: v.MainSegmentCount,
		BlocksPerSeg: v.BlocksPerSeg,
		TreePage:     treePerDir,
	}
	p.Geometry = volumeGeometry(si, v)
	p.Counters = volumeCounters(v)
	if si.ID == DemoID {
		// The demo's files to zero first, above a tree in which /seed comes last.
		for _, l := range s.tour() {
			if l.Href != "/images/"+DemoID {
				p.Start = append(p.Start, l)
			}
		}
	}
	for _, c := range v.CurrentSegments {
		p.Current = append(p.Current, templates.KV{
			Key:   c.Type,
			Value: fmt.Sprintf("segment %d, next block %d", c.Segno, c.Blkoff),
			Title: fmt.Sprintf("active log %d (CURSEG_%s)", c.Log, strings.ToUpper(strings.ReplaceAll(c.Type, "-", "_"))),
		})
	}
	// The tree shows the first maxTree paths in walk order, at most treePerDir entries of each
	// directory, read lazily: a listing stops when the page is full, so an image of a million files
	// (or a crafted directory that lists millions) costs a page. A directory not listed whole says
	// so (State "partial", After its last name shown) and the page's script fetches the rest from
	// GET /api/images/{id}/dir when it is opened; a damaged tree is listed as far as it is sound, with
	// what was stepped over said below it.
	const maxTree = 5000
	dirs := map[string]int{}  // directory path → its index in p.Files
	shown := map[string]int{} // directory path → entries of it shown
	partial := func(dir string) {
		if i, ok := dirs[dir]; ok {
			p.Files[i].State = "partial"
		}
	}
	probs, err := si.Image.Walk(r.Context(), func(e imgio.Entry) error {
		parent := path.Dir(e.Path)
		if e.Path != "/" && shown[parent] == treePerDir {
			// Not entered (a directory) or the rest of the directory skipped (anything else).
			partial(parent)
			return fs.SkipDir
		}
		if len(p.Files) == maxTree {
			p.FilesMore = 1
			// The directories on the way to this entry are not listed whole.
			for d := parent; ; d = path.Dir(d) {
				partial(d)
				if d == "/" {
					break
				}
			}
			return errPageFull
		}
		it := fileItem(e)
		it.Compressed = treeCompression(si, v.Features, e)
		if e.Path != "/" {
			shown[parent]++
			p.Files[dirs[parent]].After = path.Base(e.Path)
		}
		if e.Type == imgio.TypeDir {
			dirs[e.Path] = len(p.Files)
			it.State = "complete"
		}
		p.Files = append(p.Files, it)
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		s.pageError(w, r, err)
		return
	}
	for _, pr := range probs.List {
		p.Problems = append(p.Problems, pr.Error())
	}
	if probs.Dropped > 0 {
		p.Problems = append(p.Problems, fmt.Sprintf("and %d more problems", probs.Dropped))
	}
	s.render(w, r, http.StatusOK, templates.Image(p))
}

// fileItem places an entry in the tree: depth 0 is the root.
func fileItem(e imgio.Entry) templates.FileItem {
	it := templates.FileItem{Path: e.Path, Ino: e.Ino, Type: string(e.Type), Size: e.Size}
	if e.Path == "/" {
		it.Name = "/"
		return it
	}
	it.Depth = strings.Count(e.Path, "/")
	it.Name = path.Base(e.Path)
	if e.Type == imgio.TypeDir {
		it.Name += "/"
	}
	return it
}

func volumeGeometry(si *StoredImage, v imgio.Volume) []templates.KV {
	kv := []templates.KV{
		{Key: "image", Value: fmt.Sprintf("%s (%s)", templates.Bytes(si.Size), si.Format)},
		{Key: "block size", Value: templates.Int(v.BlockSize) + " B", Title: "1 << log_blocksize"},
		{Key: "blocks", Value: templates.Int(v.BlockCount), Title: "block_count"},
		{Key: "segments", Value: fmt.Sprintf("%s (%s in main area)", templates.Int(v.SegmentCount), templates.Int(v.MainSegmentCount)), Title: "segment_count / segment_count_main"},
		{Key: "segs/section · secs/zone", Value: fmt.Sprintf("%d · %d", v.SegsPerSec, v.SecsPerZone)},
		{Key: "segment0 / CP", Value: fmt.Sprintf("%s / %s", templates.Int(v.Segment0Blkaddr), templates.Int(v.CPBlkaddr)), Title: "segment0_blkaddr / cp_blkaddr"},
		{Key: "SIT / NAT / SSA", Value: fmt.Sprintf("%s / %s / %s", templates.Int(v.SITBlkaddr), templates.Int(v.NATBlkaddr), templates.Int(v.SSABlkaddr)), Title: "sit_blkaddr / nat_blkaddr / ssa_blkaddr"},
		{Key: "main area", Value: fmt.Sprintf("%s … %s", templates.Int(v.MainBlkaddr), templates.Int(v.MaxBlkaddr)), Title: "main_blkaddr … MAX_BLKADDR (exclusive)"},
		{Key: "root inode", Value: strconv.FormatUint(uint64(v.RootIno), 10)},
	}
	if v.VolumeName != "" {
		kv = append(kv, templates.KV{Key: "label", Value: v.VolumeName})
	}
	if v.UUID != "" {
		kv = append(kv, templates.KV{Key: "UUID", Value: v.UUID})
	}
	// What the superblock says and what it does not (issue 38): its version strings are the uname
	// of the host where f2fs-tools ran (mkfs.f2fs: init_version; the last to write the superblock,
	// mkfs or fsck: version), never the kernel that wrote the files, which no field records.
	if v.InitVersion != "" {
		kv = append(kv, templates.KV{Key: "mkfs.f2fs ran on", Value: shortUname(v.InitVersion),
			Title: v.InitVersion + " — the superblock's init_version: the host where mkfs.f2fs made the volume, not the kernel that wrote the files"})
	}
	if v.Version != "" && v.Version != v.InitVersion {
		kv = append(kv, templates.KV{Key: "f2fs-tools last ran on", Value: shortUname(v.Version),
			Title: v.Version + " — the superblock's version: the host where f2fs-tools (mkfs.f2fs, fsck.f2fs) last wrote the superblock"})
	}
	written := templates.KV{Key: "files written by", Value: "not recorded in the image",
		Title: "no field of an F2FS image names the kernel that wrote its files: the superblock's version strings name where f2fs-tools ran"}
	if si.ID == DemoID {
		written = templates.KV{Key: "files written by", Value: "Linux 6.12.117 (Debian, in qemu)",
			Title: "the demo image's data, nodes, NAT, SIT and checkpoints are the kernel's: mkfs.f2fs made the empty volume, Debian's 6.12.117 kernel wrote every file (imgio/demo/README.md)"}
	}
	kv = append(kv, written)
	return kv
}

// shortUname is a kernel banner's first three words ("Linux version 6.18.44-…"): the rest stays
// in the hover text.
func shortUname(v string) string {
	if f := strings.Fields(v); len(f) > 3 {
		return strings.Join(f[:3], " ")
	}
	return v
}

func volumeCounters(v imgio.Volume) []templates.KV {
	return []templates.KV{
		{Key: "checkpoint", Value: fmt.Sprintf("version %d, pack %d, flags %#x", v.CheckpointVersion, v.CheckpointPack, v.CheckpointFlags)},
		{Key: "valid blocks", Value: fmt.Sprintf("%s of %s", templates.Int(v.ValidBlockCount), templates.Int(v.UserBlockCount)), Title: "valid_block_count of user_block_count"},
		{Key: "valid nodes / inodes", Value: fmt.Sprintf("%s / %s", templates.Int(v.ValidNodeCount), templates.Int(v.ValidInodeCount))},
		{Key: "free segments", Value: templates.Int(v.FreeSegmentCount), Title: "free_segment_count"},
		{Key: "reserved / overprov", Value: fmt.Sprintf("%s / %s segments", templates.Int(v.RsvdSegmentCount), templates.Int(v.OverprovSegmentCount))},
		{Key: "elapsed time", Value: fmt.Sprintf("%s s", templates.Int(v.ElapsedTime))},
	}
}

// lookupFile finds the page's ?path= in si. With follow, symlinks are followed as open(2) does (the
// player zeroes the link's target); without, the path itself is described.
func lookupFile(si *StoredImage, r *http.Request, follow bool) (*imgio.File, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return nil, badParam("path", "missing")
	}
	if follow {
		return si.Image.ResolveContext(r.Context(), p)
	}
	return si.Image.LookupContext(r.Context(), p)
}

// handleFilePage serves GET /images/{id}/file?path=: a file's block map.
func (s *Server) handleFilePage(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	f, err := lookupFile(si, r, false)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v := si.Image.Volume()
	in := f.Inode()
	p := templates.FilePage{
		Layout: s.layout(f.Path(), "js/file.js", imageCrumb(si, true), templates.Crumb{Label: f.Path()}),
		ID:     si.ID,
		Path:   f.Path(),
		Ino:    in.Ino,
		Type:   string(in.Type),
		Size:   in.Size,
		Blocks: in.Blocks,
		Inline: in.Inline != 0,
	}
	p.Inode = inodeKV(in)
	p.Compressed = compressionNote(in)
	p.MainBlkaddr, p.BlocksPerSeg = v.MainBlkaddr, max(v.BlocksPerSeg, 1)
	p.Presets = presets(in.Size, v.BlockSize)
	// A broken node is shown on the page rather than failing it: the
	// inode and the rest of the map are still worth seeing.
	// The page shows the first fileMapExtents extents and fileMapDnodes dnodes (web/filemap.go): a
	// crafted file of a million extents is a page of a few MB, and the map API pages through the rest.
	var msgs []string
	if ext, next, err := mapPage(r.Context(), si.Image, f, 0, fileMapExtents); err != nil {
		msgs = append(msgs, s.pageMsg(err))
	} else {
		for _, e := range ext {
			p.Extents = append(p.Extents, extentItem(v, e))
		}
		if next > 0 {
			p.MapNext = next
			p.MapURL = fmt.Sprintf("/api/images/%s/map?path=%s&from=%d", url.PathEscape(si.ID), url.QueryEscape(f.Path()), next)
		}
	}
	if dn, err := f.Dnodes(); err != nil {
		msgs = append(msgs, s.pageMsg(err))
	} else {
		if len(dn) > fileMapDnodes {
			p.DnodesLeft = len(dn) - fileMapDnodes
			p.DnodesURL = fmt.Sprintf("/api/images/%s/dnodes?path=%s", url.PathEscape(si.ID), url.QueryEscape(f.Path()))
			dn = dn[:fileMapDnodes]
		}
		for _, d := range dn {
			p.Dnodes = append(p.Dnodes, dnodeItem(f, d))
		}
	}
	p.Err = strings.Join(msgs, "; ")
	s.render(w, r, http.StatusOK, templates.File(p))
}

// pageMsg is the user-facing text of err, as errorStatus words it.
func (s *Server) pageMsg(err error) string {
	code, msg := s.errorStatus(err)
	if code >= 500 {
		s.log.Error("file page", "err", err)
	}
	return msg
}

func inodeKV(in imgio.Inode) []templates.KV {
	kv := []templates.KV{
		{Key: "inode", Value: strconv.FormatUint(uint64(in.Ino), 10)},
		{Key: "type · mode", Value: fmt.Sprintf("%s · %#o", in.Type, in.Mode)},
		{Key: "size", Value: fmt.Sprintf("%s bytes (%s)", templates.Int(in.Size), templates.Bytes(in.Size)), Title: "i_size"},
		{Key: "i_blocks", Value: templates.Int(in.Blocks), Title: "data blocks (NEW_ADDR included), node blocks and the inode"},
		{Key: "slots in inode", Value: strconv.Itoa(in.AddrsPerInode), Title: "addrs_per_inode"},
		{Key: "inode block", Value: strconv.FormatUint(uint64(in.Blkaddr), 10)},
		{Key: "i_nid[0..4]", Value: fmt.Sprint(in.Nids), Title: "direct, direct, indirect, indirect, double indirect"},
	}
	if in.Inline != 0 {
		kv = append(kv, templates.KV{Key: "i_inline", Value: fmt.Sprintf("%#x", in.Inline)})
	}
	if in.Ext.Len != 0 {
		kv = append(kv, templates.KV{Key: "i_ext", Value: fmt.Sprintf("fofs %d → %d, len %d", in.Ext.Fofs, in.Ext.Blkaddr, in.Ext.Len), Title: "largest extent"})
	}
	if in.Checksum != "" {
		kv = append(kv, templates.KV{Key: "checksum", Value: in.Checksum})
	}
	return kv
}

// presets are the ranges the issue asks for: the whole file, its first
// MiB, and an unaligned range that exercises fill_zero at both ends.
func presets(size int64, blockSize uint32) []templates.Preset {
	bs := int64(blockSize)
	if bs <= 0 {
		bs = f2fs.BlockSize
	}
	out := []templates.Preset{{Label: "whole file", Offset: 0, Length: max(size, 1)}}
	if size > 1<<20 {
		out = append(out, templates.Preset{Label: "first 1 MiB", Offset: 0, Length: 1 << 20})
	}
	if size > 4*bs {
		// Start mid-block and end mid-block: a partial head page, whole
		// pages, a partial tail page.
		off := bs + bs/2
		n := min(size-off-bs/2, 64<<20)
		out = append(out, templates.Preset{Label: "unaligned range", Offset: off, Length: n})
	}
	return out
}

func extentItem(v imgio.Volume, e imgio.Extent) templates.ExtentItem {
	it := templates.ExtentItem{Index: e.Index, Count: e.Count, State: e.State, Addr: e.Addr, Segno: -1}
	if e.State == "addr" && e.Addr >= v.MainBlkaddr && e.Addr < v.MaxBlkaddr && v.BlocksPerSeg > 0 {
		it.Segno = int64(f2fs.SegNo(e.Addr, v.MainBlkaddr))
	}
	return it
}

func dnodeItem(f *imgio.File, d imgio.Dnode) templates.DnodeItem {
	it := templates.DnodeItem{Path: d.Path, Kind: d.Kind, Nid: d.Nid, Blkaddr: d.Blkaddr, Start: d.Start, Len: d.Len}
	slots := d.Slots
	if slots == nil {
		// Dnodes may leave Slots out to save copies; count from the slot
		// view of the same node.
		if _, s, _, err := f.DnodeSlots(d.Start); err == nil {
			slots = s
		}
	}
	for _, a := range slots {
		switch a {
		case imgio.NullAddr, imgio.CompressAddr:
		case imgio.NewAddr:
			it.New++
		default:
			it.Mapped++
		}
	}
	return it
}

// handleRunPage serves GET /images/{id}/run?path=&offset=&length=&mode=&step=&run=end:
// the player. The websocket checks the run itself; the page only needs
// values it can show.
func (s *Server) handleRunPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Set("image", chi.URLParam(r, "id"))
	t, err := s.resolvePlayerRun(r.Context(), q)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	step, err := stepParam(q)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderRunPage(w, r, t, step, "")
}

// renderRunPage renders the player for run t at step; follow is the room code of a follower's page.
func (s *Server) renderRunPage(w http.ResponseWriter, r *http.Request, t *runTarget, step int64, follow string) {
	q := r.URL.Query()
	req := t.spec.Request
	size := t.spec.Input.Inode.Size
	p := templates.RunPage{
		Path:     t.info.Path,
		Size:     size,
		Offset:   req.Offset,
		Length:   req.Length,
		Mode:     t.run.ModeName(),
		KeepSize: req.KeepSize,
		Step:     step,
		RunEnd:   q.Get("run") == "end",
		Before:   t.info.Before,
		Follow:   follow,
		Sandbox:  t.info.Sandbox,
		OpForms:  opFormsJSON(),
	}
	crumb := playedWords(t, &p)
	for _, pc := range pacePresets() {
		p.Paces = append(p.Paces, templates.Pace{Value: pc.Value, Label: pc.Label, Default: pc.Value == defaultPace})
	}
	if t.si == nil {
		p.Layout = s.layout("sandbox · run", "js/run.js",
			templates.Crumb{Label: "sandbox", Href: "/sandbox?slots=" + url.QueryEscape(t.info.Sandbox)},
			templates.Crumb{Label: crumb})
	} else {
		si, f := t.si, t.file
		// The tab's title names the call too (a punch and a zero of one file are two tabs).
		title := f.Path() + " · run"
		if t.run.Op != core.OpZero {
			title = f.Path() + " · " + crumb
		}
		p.Layout = s.layout(title, "js/run.js", imageCrumb(si, true),
			templates.Crumb{Label: f.Path(), Href: "/images/" + si.ID + "/file?path=" + url.QueryEscape(f.Path())},
			templates.Crumb{Label: crumb})
		p.ID, p.Name = si.ID, si.Name
		p.Presets = presets(size, si.Image.Volume().BlockSize)
		if sides := compareSides(); len(sides) > 0 && t.run.Op == sides[0].op {
			// The compare page's first side (a zero) links to the others of its range.
			p.CompareURL = compareURL(si.ID, t.run, t.info.Before)
		}
	}
	p.Layout.BodyClass = "player"
	s.render(w, r, http.StatusOK, templates.Run(p))
}

// playedWords fills p's call (Op, the form's Ops, Played, TruncSize) from t and returns the
// breadcrumb's last label: what the page plays, as the kernel's call names it.
func playedWords(t *runTarget, p *templates.RunPage) string {
	req := t.spec.Request
	size := t.spec.Input.Inode.Size
	played := t.run.Played()
	p.Op = t.run.Kind()
	// A truncate's size field shows its size; for the other calls it offers half the file, whole
	// pages, so that switching the form to truncate frees something.
	p.TruncSize = size / 2 &^ 4095
	if played.Range == request.RangeToSize {
		p.TruncSize = req.Offset
	}
	// The form's choices: every played operation, by its declaration.
	for _, s := range request.Playable() {
		f := s.Played
		p.Ops = append(p.Ops, templates.OpChoice{Value: s.Kind, Label: f.Label, Range: f.Range == request.RangeOffsetLength,
			Size: f.Range == request.RangeToSize, KeepSize: f.KeepSize, Selected: s.Kind == p.Op})
	}
	p.Played = played.Sentence(t.info.Path, req)
	return played.Crumb(req)
}

// stepParam reads a view's ?step= (0 when absent).
func stepParam(q url.Values) (int64, error) {
	v := q.Get("step")
	if v == "" {
		return 0, nil
	}
	step, err := request.ParseSize("step", v)
	if err != nil || step < 0 {
		return 0, badParam("step", "want a non-negative integer")
	}
	return step, nil
}

// handleSandboxRun serves /sandbox/run?slots=L&mode=M[&op=punch]: the player on a sandbox slot list.
func (s *Server) handleSandboxRun(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	t, err := resolveSandbox(q.Get("slots"), q.Get("mode"), q.Get(request.FieldOp))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	step, err := stepParam(q)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderRunPage(w, r, t, step, "")
}
