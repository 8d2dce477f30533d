package zrviz_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The F2FS constants and formulas live in internal/f2fs, once (issue 27). TestF2FSConstantsDefinedOnce
// reads every non-test Go file outside it and fails on a copy coming back: one of the literal values
// that were copied (4096, 512, 0x3FF, 1018, 923, 455, the special addresses, SMALL_VOLUME_SEGMENTS written
// out, the inode's i_addr and i_nid offsets), a shift by log_blocks_per_seg (9) or SIT_VBLOCKS_SHIFT (10),
// a log name, the segment-number formula (x − base) / BlocksPerSeg (or its % for the offset),
// current_nat_addr's 2·BlocksPerSeg·(b / BlocksPerSeg) or its inverse's x / (2·BlocksPerSeg), block size /
// NAT or SIT entry size, or a constant set to a literal whose comment cites
// a kernel name internal/f2fs defines. What remains is listed in constantAllowed, each with why it is not
// a copy; an entry that matches fewer places than it says fails too, so the list cannot go stale.
// The engine's page arithmetic (>> 12, & 4095: PAGE_SHIFT, the page cache's, not an F2FS constant) is
// not checked.

// copiedValues are the integer values that were copies of F2FS constants.
var copiedValues = map[uint64]string{
	4096:       "BlockSize",
	512:        "BlocksPerSeg",
	1023:       "SITVBlocksMask",
	1018:       "DefAddrsPerBlock / NidsPerBlock",
	923:        "DefAddrsPerInode",
	455:        "NATEntryPerBlock",
	8192:       "SmallVolumeSegments",
	360:        "InodeAddrOffset",
	4052:       "InodeNidOffset",
	0xFFFFFFFF: "NewAddr / NullSegno",
	0xFFFFFFFE: "CompressAddr",
	0xFFFFFFFD: "CompressAddr - 1",
}

var logNameStrings = []string{"hot-data", "warm-data", "cold-data", "hot-node", "warm-node", "cold-node"}

// constantAllowed lists the hits that are not copies: file (slash-separated, from the module root),
// what the check reports, how many times, and why.
var constantAllowed = []struct {
	file, hit string
	n         int
	why       string
}{
	{"imgio/raw.go", "literal 512", 1, "VolumeName [512]uint16: the superblock's volume_name array length (MAX_VOLUME_NAME), not a segment"},
	{"imgio/expand.go", "literal 0xFFFFFFFF", 1, "the xz LZMA2 dictionary size for property 40 (4 GiB − 1), not NEW_ADDR"},
	{"sandbox/input.go", "literal 512", 1, "Segment0Blkaddr: the synthetic volume's segment0_blkaddr (an address mkfs.f2fs also picks), not the segment size"},
	{"web/store.go", "literal 512", 1, "st_blocks counts 512-byte units (stat(2)), not F2FS blocks"},
	{"web/diff.go", "literal 512", 1, "diffMapCells: the diff page's SIT map width in cells, a drawing choice"},
	{"sandbox/input.go", "segno formula", 1, "MaxMainEnd is a constant expression, where f2fs.SegNo (a function) cannot stand"},
	{"imgio/fs.go", "literal 0x2000", 1, "S_IFCHR in an inode's i_mode, not SMALL_VOLUME_SEGMENTS"},
	{"imgio/super.go", "literal 0x2000", 1, "featCompression, F2FS_FEATURE_COMPRESSION: a feature bit imgio alone reads"},
	{"imgio/super.go", "literal 0x200", 1, "F2FS_FEATURE_LOST_FOUND in the feature name table, not a segment size"},
	{"imgio/node.go", "literal 0xFFFFFFFF", 1, "the inode checksum's CRC seed (f2fs_inode_chksum starts from ~0), not NEW_ADDR"},
	{"gc/state.go", "literal 4096", 1, "DefMaxVictimSearch, DEF_MAX_VICTIM_SEARCH (gc.h): a count of segments, defined once"},
	{"imgio/block.go", "literal 4096", 1, "maxInspectReads: the inspector's read budget"},
	{"imgio/blockfields.go", "literal 0x1000", 1, "F2FS_INDEX_FL in the inode flag name table"},
	{"imgio/detect.go", "literal 4096", 1, "HeaderSize: the bytes of an upload sniffed for its format"},
	{"imgio/dir.go", "literal 4096", 1, "PathMax, PATH_MAX"},
	{"imgio/fs.go", "literal 0x1000", 1, "S_IFIFO in an inode's i_mode"},
	{"imgio/image.go", "literal 4096", 1, "natCacheMax: entries in the NAT block cache"},
	{"imgio/super.go", "literal 0x1000", 1, "F2FS_FEATURE_CASEFOLD in the feature name table"},
	{"ktrace/trace.go", "literal 4096", 1, "DefaultMaxLineLen: bytes of one trace line"},
	{"player/outline.go", "literal 4096", 3, "MaxMarkers, MaxSegments and how often the outline walk looks at its context: counts"},
	{"request/ops.go", "literal 4096", 1, "the ops scanner's initial buffer, PATH_MAX"},
	{"request/request.go", "literal 4096", 1, "PATH_MAX"},
	{"sandbox/input.go", "literal 4096", 1, "MainBlkaddr: the synthetic volume's main_blkaddr, an address"},
	{"templates/exercise_templ.go", "literal 4096", 2, "A COPY, left: offset/4096 in templates/exercise.templ, which the exercise stream edits in parallel (a regenerated templ file would conflict); to be replaced by a block count the exercise carries"},
	{"web/connlimit.go", "literal 4096", 1, "DefaultMaxConns"},
	{"web/protocol.go", "literal 4096", 2, "maxControlSize (bytes of a client message) and helloInitial (extents): sizes of the protocol"},
	{"web/traces.go", "literal 4096", 1, "MaxLineLen of an uploaded trace line"},
	{"request/ops.go", "literal 8192", 1, "the ops file scanner's line limit in bytes, not SMALL_VOLUME_SEGMENTS"},
}

// constantHit is one place a check found.
type constantHit struct {
	file string // slash-separated, from the module root
	line int
	hit  string // "literal 512", "shift by 10", "log name \"hot-data\"", "segno formula", ...
}

func TestF2FSConstantsDefinedOnce(t *testing.T) {
	names := f2fsKernelNames(t, "internal/f2fs")
	for _, n := range []string{"F2FS_BLKSIZE", "BLKS_PER_SEG", "SMALL_VOLUME_SEGMENTS", "NULL_ADDR", "NEW_ADDR",
		"COMPRESS_ADDR", "NULL_SEGNO", "DEF_ADDRS_PER_INODE", "DEF_ADDRS_PER_BLOCK", "NIDS_PER_BLOCK",
		"NAT_ENTRY_PER_BLOCK", "SIT_ENTRY_PER_BLOCK", "SIT_VBLOCKS_SHIFT", "SIT_VBLOCKS_MASK", "CP_UMOUNT_FLAG",
		"CP_ERROR_FLAG", "CP_TRIMMED_FLAG", "CP_NAT_BITS_FLAG"} {
		if !names[n] {
			t.Errorf("internal/f2fs's constant comments do not cite %s; the check would not see its copies", n)
		}
	}
	var hits []constantHit
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case filepath.Join("internal", "f2fs"), "static", "docs", "scripts", "reliability", ".git":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		hs, err := constantCopies(filepath.ToSlash(path), nil, names)
		hits = append(hits, hs...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files; the walk missed the tree", files)
	}
	count := map[[2]string]int{}
	for _, h := range hits {
		count[[2]string{h.file, h.hit}]++
	}
	allowed := map[[2]string]int{}
	for _, a := range constantAllowed {
		allowed[[2]string{a.file, a.hit}] = a.n
		if got := count[[2]string{a.file, a.hit}]; got < a.n {
			t.Errorf("constantAllowed lists %d × %s in %s but there are %d: shorten the list", a.n, a.hit, a.file, got)
		}
	}
	for _, h := range hits {
		k := [2]string{h.file, h.hit}
		if count[k] > allowed[k] {
			t.Errorf("%s:%d: %s — a copy of an F2FS constant or formula; use internal/f2fs (or list it in constantAllowed with why it is not a copy)", h.file, h.line, h.hit)
		}
	}
}

// TestConstantCopiesFindsEachPattern holds the checker itself to every pattern it was written for, so
// TestF2FSConstantsDefinedOnce cannot pass by finding nothing.
func TestConstantCopiesFindsEachPattern(t *testing.T) {
	src := `package p

const blocksPerSeg = 512
// small is SMALL_VOLUME_SEGMENTS.
const small = 16 * 8192 / 16
const (
	cpUmount = 0x1 // CP_UMOUNT_FLAG
)

func f(a, main, b uint32, vb uint16) {
	_ = vb & 0x3FF
	_ = vb >> 10
	_ = uint64(b) << 9
	_ = (a - main) / blocksPerSeg
	_ = (a - main) % BlocksPerSeg
	_ = 2*blocksPerSeg*(b/blocksPerSeg) + b%blocksPerSeg + b/(2*blocksPerSeg)
	_ = "warm-node"
	_ = bs / natEntrySize + 4096/f2fs.SITEntrySize
	_ = 1018 + 923 + 455 + 360 + 4052
	_ = uint32(0xFFFFFFFF) + 0xFFFFFFFE + 0xFFFFFFFD
	_ = 64 << 10 // KiB: not a copy
	_ = (a - main) / 4 // not by BlocksPerSeg: not a copy
	_ = (a + blocksPerSeg - 1) / blocksPerSeg // rounding up: not a copy
}
`
	got, err := constantCopies("p.go", []byte(src), map[string]bool{"CP_UMOUNT_FLAG": true, "SMALL_VOLUME_SEGMENTS": true})
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	for _, h := range got {
		hits = append(hits, fmt.Sprintf("%d %s", h.line, h.hit))
	}
	want := []string{
		"3 literal 512",
		"5 literal 8192", "5 constant citing SMALL_VOLUME_SEGMENTS",
		"7 constant citing CP_UMOUNT_FLAG",
		"11 literal 0x3FF",
		"12 shift by 10",
		"13 shift by 9",
		"14 segno formula",
		"15 segno formula",
		"16 current_nat_addr formula", "16 NAT block inverse formula",
		"17 log name \"warm-node\"",
		"18 entries per block formula", "18 entries per block formula", "18 literal 4096",
		"19 literal 1018", "19 literal 923", "19 literal 455", "19 literal 360", "19 literal 4052",
		"20 literal 0xFFFFFFFF", "20 literal 0xFFFFFFFE", "20 literal 0xFFFFFFFD",
	}
	slices.Sort(hits)
	slices.Sort(want)
	if !slices.Equal(hits, want) {
		t.Errorf("hits:\n%s\nwant:\n%s", strings.Join(hits, "\n"), strings.Join(want, "\n"))
	}
}

var kernelName = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

// f2fsKernelNames returns the kernel names (CP_UMOUNT_FLAG, SIT_VBLOCKS_MASK, …) the comments of
// internal/f2fs's constants cite.
func f2fsKernelNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	names := map[string]bool{}
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, m, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for _, c := range specComments(g, vs) {
					if c != nil {
						for _, n := range kernelName.FindAllString(c.Text(), -1) {
							names[n] = true
						}
					}
				}
			}
		}
	}
	// Names that are not themselves constants internal/f2fs defines.
	for _, n := range []string{"GET_SIT_VBLOCKS", "GET_SIT_TYPE", "NR_CURSEG_TYPE", "ADDRS_PER_BLOCK", "BLKS_TO_SEGS", "SEGS_TO_BLKS"} {
		delete(names, n)
	}
	return names
}

// constantCopies parses one file (src, or the file at path when src is nil) and reports the places
// that copy an F2FS constant or formula.
func constantCopies(path string, src []byte, names map[string]bool) ([]constantHit, error) {
	fset := token.NewFileSet()
	var text any // nil: ParseFile reads path (a nil []byte would be an empty file)
	if src != nil {
		text = src
	}
	f, err := parser.ParseFile(fset, path, text, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var hits []constantHit
	add := func(n ast.Node, hit string) {
		hits = append(hits, constantHit{file: path, line: fset.Position(n.Pos()).Line, hit: hit})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			switch n.Kind {
			case token.INT:
				v, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
				if _, ok := copiedValues[v]; err == nil && ok {
					add(n, "literal "+n.Value)
				}
			case token.STRING:
				if s, err := strconv.Unquote(n.Value); err == nil && slices.Contains(logNameStrings, s) {
					add(n, "log name "+n.Value)
				}
			}
		case *ast.BinaryExpr:
			switch {
			case (n.Op == token.SHR || n.Op == token.SHL) && isIntLit(n.Y, 9),
				n.Op == token.SHR && isIntLit(n.Y, 10):
				add(n, "shift by "+n.Y.(*ast.BasicLit).Value)
			case (n.Op == token.QUO || n.Op == token.REM) && isBlocksPerSeg(n.Y) && isSub(n.X):
				add(n, "segno formula")
			case n.Op == token.MUL && isTwoSegs(n.X) && isQuoBySeg(n.Y):
				add(n, "current_nat_addr formula")
			case (n.Op == token.QUO || n.Op == token.REM) && isTwoSegs(n.Y):
				add(n, "NAT block inverse formula")
			case n.Op == token.QUO && isEntrySize(n.Y):
				add(n, "entries per block formula")
			}
		case *ast.GenDecl:
			if n.Tok != token.CONST {
				return true
			}
			for _, s := range n.Specs {
				vs := s.(*ast.ValueSpec)
				if len(vs.Values) == 0 || !allLiterals(vs.Values[0]) {
					continue
				}
				for _, c := range specComments(n, vs) {
					if c == nil {
						continue
					}
					for _, k := range kernelName.FindAllString(c.Text(), -1) {
						if names[k] {
							add(vs, "constant citing "+k)
						}
					}
				}
			}
		}
		return true
	})
	return hits, nil
}

// specComments are the comments that speak of one constant: its own doc and line comment, and the
// declaration's doc when it declares that constant alone (const X = 1, no parentheses).
func specComments(g *ast.GenDecl, vs *ast.ValueSpec) []*ast.CommentGroup {
	cs := []*ast.CommentGroup{vs.Doc, vs.Comment}
	if !g.Lparen.IsValid() {
		cs = append(cs, g.Doc)
	}
	return cs
}

func isIntLit(e ast.Expr, v uint64) bool {
	l, ok := e.(*ast.BasicLit)
	if !ok || l.Kind != token.INT {
		return false
	}
	x, err := strconv.ParseUint(l.Value, 0, 64)
	return err == nil && x == v
}

func isBlocksPerSeg(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return strings.EqualFold(e.Name, "BlocksPerSeg")
	case *ast.SelectorExpr:
		return strings.EqualFold(e.Sel.Name, "BlocksPerSeg")
	}
	return isIntLit(e, 512)
}

// isSub reports whether e is a subtraction of something not a literal: (a − main_blkaddr), not the
// (n + BlocksPerSeg − 1) of a rounding up.
// isEntrySize reports whether e names a NAT or SIT entry's size: block size / it is NAT_ENTRY_PER_BLOCK
// or SIT_ENTRY_PER_BLOCK again.
func isEntrySize(e ast.Expr) bool {
	var name string
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		name = e.Name
	case *ast.SelectorExpr:
		name = e.Sel.Name
	}
	return strings.EqualFold(name, "NATEntrySize") || strings.EqualFold(name, "SITEntrySize")
}

func isSub(e ast.Expr) bool {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	return ok && b.Op == token.SUB && !allLiterals(b.Y)
}

func isTwoSegs(e ast.Expr) bool {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	return ok && b.Op == token.MUL && isIntLit(b.X, 2) && isBlocksPerSeg(b.Y)
}

func isQuoBySeg(e ast.Expr) bool {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	return ok && b.Op == token.QUO && isBlocksPerSeg(b.Y)
}

// allLiterals reports whether e is built of integer literals alone (0x400, 1 << 3, 16 * 512).
func allLiterals(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return e.Kind == token.INT
	case *ast.BinaryExpr:
		return allLiterals(e.X) && allLiterals(e.Y)
	case *ast.UnaryExpr:
		return allLiterals(e.X)
	}
	return false
}
