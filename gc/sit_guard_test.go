package gc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSITOneWriter holds issue 36's "one SIT owner": no valid count, valid map, checkpointed map,
// discard map, mtime or segment type is written anywhere in packages gc and core but in gc/sit.go
// (gc.Entry's methods). It parses every non-test source of both packages and fails on
//
//   - an assignment, op-assignment or ++/-- whose target is (an element of) a field of one of those
//     names — gc.Entry's own (valid, curMap, ckptMap, discMap, mtime, typ) or the names the two copies had
//     before (Valid, Map, Mtime, orig, origValid) — outside gc/sit.go;
//   - a struct type outside gc/sit.go with a field holding a 512-bit map ([64]byte) other than the
//     copies handed out or kept as the image's before picture (listed in mapFields, each of which
//     the first rule keeps from being written after it is built);
//   - a bit flipped in a [64]byte outside gc/sit.go (|=, &^=, &=, ^= on an element) other than
//     core.SetValidBit, which encodes a caller's input map.
//
// A second SIT model would have to keep a count or a map of its own, and so break one of these.
func TestSITOneWriter(t *testing.T) {
	forbidden := []string{"valid", "curMap", "ckptMap", "discMap", "mtime", "typ", "Valid", "Map", "Mtime", "orig", "origValid"}
	// Struct fields of type [64]byte allowed outside gc/sit.go: values handed out (never the
	// model's state) and the image's before picture of a segment core loaded.
	mapFields := []string{"gc.Segment.Map", "core.SegmentNow.Map", "core.segState.orig"}
	// Functions allowed to flip a bit of a [64]byte outside gc/sit.go.
	// The segment manager's free, dirty and victim bitsets are []uint64 (gc/state.go), not maps.
	bitWriters := []string{"core.SetValidBit", "gc.bitset.set", "gc.bitset.clear"}

	files := 0
	for _, dir := range []string{".", "../core"} {
		pkg := filepath.Base(dir)
		if dir == "." {
			pkg = "gc"
		}
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, name, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			files++
			owner := pkg == "gc" && filepath.Base(name) == "sit.go"
			if owner {
				continue
			}
			for _, p := range checkFile(fset, f, pkg, forbidden, mapFields, bitWriters) {
				t.Error(p)
			}
		}
	}
	if files < 20 {
		t.Fatalf("parsed only %d files of gc and core", files)
	}
}

// checkFile lists the writes of a SIT entry's parts in f that TestSITOneWriter forbids.
func checkFile(fset *token.FileSet, f *ast.File, pkg string, forbidden, mapFields, bitWriters []string) []string {
	var out []string
	// Struct fields holding a valid map.
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return true
		}
		for _, fl := range st.Fields.List {
			if !isMap64(fl.Type) {
				continue
			}
			for _, id := range fl.Names {
				if q := pkg + "." + ts.Name.Name + "." + id.Name; !slices.Contains(mapFields, q) {
					out = append(out, fmt.Sprintf("%s: %s holds a valid map of its own: the SIT is gc.Entry's", fset.Position(id.Pos()), q))
				}
			}
		}
		return true
	})
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		fn := pkg + "." + fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			r := fd.Recv.List[0].Type
			if st, ok := r.(*ast.StarExpr); ok {
				r = st.X
			}
			if id, ok := r.(*ast.Ident); ok {
				fn = pkg + "." + id.Name + "." + fd.Name.Name
			}
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			var lhs []ast.Expr
			var tok token.Token
			switch s := n.(type) {
			case *ast.AssignStmt:
				lhs, tok = s.Lhs, s.Tok
			case *ast.IncDecStmt:
				lhs, tok = []ast.Expr{s.X}, s.Tok
			default:
				return true
			}
			if tok == token.DEFINE {
				return true
			}
			for _, x := range lhs {
				if name, ok := fieldWritten(x); ok && slices.Contains(forbidden, name) {
					out = append(out, fmt.Sprintf("%s: %s writes field %s: valid counts, maps and mtimes are written only by gc.Entry's methods (gc/sit.go)", fset.Position(x.Pos()), fn, name))
				}
				if _, isIndex := x.(*ast.IndexExpr); isIndex && (tok == token.OR_ASSIGN || tok == token.AND_NOT_ASSIGN || tok == token.AND_ASSIGN || tok == token.XOR_ASSIGN) && !slices.Contains(bitWriters, fn) {
					out = append(out, fmt.Sprintf("%s: %s flips bits of an array element: a valid map's bits are set and cleared only by gc.Entry's methods (gc/sit.go)", fset.Position(x.Pos()), fn))
				}
			}
			return true
		})
	}
	return out
}

// fieldWritten names the field an assignment's target is, or is an element of: x.f, x.f[i], (*x.f).
func fieldWritten(x ast.Expr) (string, bool) {
	for {
		switch e := x.(type) {
		case *ast.SelectorExpr:
			return e.Sel.Name, true
		case *ast.IndexExpr:
			x = e.X
		case *ast.StarExpr:
			x = e.X
		case *ast.ParenExpr:
			x = e.X
		default:
			return "", false
		}
	}
}

func isMap64(x ast.Expr) bool {
	a, ok := x.(*ast.ArrayType)
	if !ok || a.Len == nil {
		return false
	}
	lit, ok := a.Len.(*ast.BasicLit)
	id, isIdent := a.Elt.(*ast.Ident)
	return ok && lit.Value == "64" && isIdent && id.Name == "byte"
}

// TestSITOneWriterCatches shows the guard failing on each kind of second writer it exists for.
func TestSITOneWriterCatches(t *testing.T) {
	forbidden := []string{"valid", "curMap", "Valid", "Map"}
	for _, src := range []string{
		"package x\nfunc f(st *segState) { st.valid-- }",
		"package x\nfunc f(st *segState) { st.valid -= 3 }",
		"package x\nfunc f(s *State) { s.segs[2].Valid = 0 }",
		"package x\nfunc f(st *segState, k uint32) { st.curMap[k>>3] &^= 1 }",
		"package x\nfunc f(m *[64]byte) { m[0] |= 0x80 }",
		"package x\ntype segState struct{ mine [64]byte }",
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(checkFile(fset, f, "core", forbidden, nil, nil)) == 0 {
			t.Errorf("the guard let through: %s", src)
		}
	}
}
