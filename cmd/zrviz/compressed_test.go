package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/zrviz/zrviz/internal/testutil"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/imgio"
)

// On-disk offsets (f2fs_fs.h struct f2fs_inode) the patch writes.
const (
	inoSize        = 0x10  // i_size
	inoFlags       = 0x50  // i_flags
	inoExt         = 0x15C // i_ext (12 bytes)
	inoAddr        = 0x168 // i_addr[0]
	inoComprBlocks = 0x180 // i_compr_blocks (an extra attribute)
	inoComprAlgo   = 0x188 // i_compress_algorithm
	inoLogCluster  = 0x189 // i_log_cluster_size
	compressedFl   = 0x4   // F2FS_COMPR_FL
	compressAddr   = 0xFFFFFFFE
	newAddr        = 0xFFFFFFFF
	blk            = 4096
)

// compressedFile is one patched file: its path, cluster size and the slot map written.
type compressedFile struct {
	path     string
	cluster  int
	api, apb int      // data slots in the inode and in a direct node
	slots    []uint32 // file block index → slot value, as written
	size     int64
}

// buildCompressedImage makes an image with mkfs.f2fs -O extra_attr,compression, fills it with
// sload.f2fs (Debian's build cannot compress, so the files are written plain), and turns one file
// per cluster size 4…256 blocks into a compressed file as the kernel would have laid it out:
// F2FS_COMPR_FL, i_log_cluster_size, i_compress_algorithm LZ4, i_compr_blocks, no extent, and the
// slots of the inode and of three direct nodes rewritten cluster by cluster with the slot counts
// rounded down to the cluster size: every third cluster compressed (COMPRESS_ADDR, a quarter of
// its blocks, NEW_ADDR for the rest), the others plain. Each file spans the inode, i_nid[0],
// i_nid[1] and the first direct node under i_nid[2].
// clusterLogs are the cluster sizes tested, as log2 of blocks: every size mkfs.f2fs allows (4 to 256
// blocks), or in the fast tier the smallest, a middle one and the largest.
func clusterLogs() []int {
	if testing.Short() {
		return []int{2, 5, 8}
	}
	return []int{2, 3, 4, 5, 6, 7, 8}
}

func buildCompressedImage(t *testing.T) (string, []compressedFile) {
	mkfs, sload := testutil.NeedTool(t, "mkfs.f2fs"), testutil.NeedTool(t, "sload.f2fs")
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "c")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	const blocks = 3200
	for _, log := range clusterLogs() {
		data := make([]byte, blocks*blk)
		for i := range data {
			data[i] = byte(i*31 + i>>12 + log)
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("c%d.bin", 1<<log)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img := filepath.Join(dir, "compressed.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 256<<20); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{mkfs, "-q", "-f", "-O", "extra_attr,compression", img},
		{sload, "-f", filepath.Join(dir, "src"), img},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, out)
		}
	}

	// Read what sload wrote: where the nodes are and the file's blocks.
	type plan struct {
		cf      compressedFile
		inode   int64   // byte offset of the inode block
		extra   int     // i_extra_isize
		nodes   []int64 // byte offsets of i_nid[0], i_nid[1], i_nid[2]/0
		written []uint32
		rawAPI  int // data slots in the inode before the cluster rounding
	}
	var plans []plan
	im, err := imgio.OpenFileContext(context.Background(), img, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, log := range clusterLogs() {
		c := 1 << log
		path := fmt.Sprintf("/c/c%d.bin", c)
		f, err := im.Lookup(path)
		if err != nil {
			t.Fatal(err)
		}
		in := f.Inode()
		ds, err := f.Dnodes()
		if err != nil {
			t.Fatal(err)
		}
		p := plan{cf: compressedFile{path: path, cluster: c}, inode: int64(in.Blkaddr) * blk, extra: int(in.ExtraISize),
			rawAPI: in.AddrsPerInode}
		for _, d := range ds[1:] {
			p.nodes = append(p.nodes, int64(d.Blkaddr)*blk)
		}
		if len(ds) != 4 || ds[1].Path != "i_nid[0]" || ds[2].Path != "i_nid[1]" || ds[3].Path != "i_nid[2]/0" || in.ExtraISize < inoComprAlgo+2-inoAddr {
			t.Fatalf("%s as written: %d dnodes, extra_isize %d", path, len(ds), in.ExtraISize)
		}
		ext, err := f.Extents()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ext {
			for k := uint64(0); k < e.Count; k++ {
				p.written = append(p.written, e.Addr+uint32(k))
			}
		}
		if len(p.written) != blocks {
			t.Fatalf("%s: %d blocks written", path, len(p.written))
		}
		p.cf.api = in.AddrsPerInode - in.AddrsPerInode%c
		p.cf.apb = 1018 - 1018%c
		plans = append(plans, p)
	}
	im.Close()

	fd, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	put := func(off int64, b []byte) {
		if _, err := fd.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	u32 := func(vs ...uint32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
		return b
	}
	var files []compressedFile
	for _, p := range plans {
		c, api, apb := p.cf.cluster, p.cf.api, p.cf.apb
		// Two clusters into the first direct node under i_nid[2].
		total := api + 2*apb + 2*c
		pool := p.written
		saved := 0
		for j := 0; len(p.cf.slots) < total; j++ {
			if j%3 == 1 {
				keep := max(1, c/4)
				p.cf.slots = append(p.cf.slots, compressAddr)
				p.cf.slots = append(p.cf.slots, pool[:keep]...)
				pool = pool[keep:]
				for range c - 1 - keep {
					p.cf.slots = append(p.cf.slots, newAddr)
				}
				saved += c - 1 - keep
				continue
			}
			p.cf.slots = append(p.cf.slots, pool[:c]...)
			pool = pool[c:]
		}
		p.cf.size = int64(total)*blk - 100
		// The inode's slots, then NULL up to the count before rounding (the kernel reads none of those).
		inodeSlots := make([]uint32, p.rawAPI)
		copy(inodeSlots, p.cf.slots[:api])
		put(p.inode+inoAddr+int64(p.extra), u32(inodeSlots...))
		starts := []int{api, api + apb, api + 2*apb}
		for k, off := range p.nodes {
			node := make([]uint32, 1018)
			copy(node, p.cf.slots[starts[k]:min(starts[k]+apb, total)])
			put(off, u32(node...))
		}
		var b8 [8]byte
		binary.LittleEndian.PutUint64(b8[:], uint64(p.cf.size))
		put(p.inode+inoSize, b8[:])
		var fl [4]byte
		if _, err := fd.ReadAt(fl[:], p.inode+inoFlags); err != nil {
			t.Fatal(err)
		}
		put(p.inode+inoFlags, u32(binary.LittleEndian.Uint32(fl[:])|compressedFl))
		put(p.inode+inoExt, make([]byte, 12))
		binary.LittleEndian.PutUint64(b8[:], uint64(saved))
		put(p.inode+inoComprBlocks, b8[:])
		put(p.inode+inoComprAlgo, []byte{1, byte(log2(c))}) // LZ4, log cluster size
		files = append(files, p.cf)
	}
	return img, files
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// slotExtents is the slot map as imgio's extents, computed from the slots written.
func slotExtents(slots []uint32, size int64) []imgio.Extent {
	var out []imgio.Extent
	eof := int((size + blk - 1) / blk)
	n := max(eof, len(slots))
	for i := 0; i < n; i++ {
		a := uint32(0)
		if i < len(slots) {
			a = slots[i]
		}
		st, addr := "addr", a
		switch a {
		case 0:
			st, addr = "null", 0
		case newAddr:
			st, addr = "new", 0
		case compressAddr:
			st, addr = "compress", 0
		}
		if k := len(out) - 1; k >= 0 && out[k].State == st && out[k].Index+out[k].Count == uint64(i) &&
			(st != "addr" || out[k].Addr+uint32(out[k].Count) == a) {
			out[k].Count++
			continue
		}
		out = append(out, imgio.Extent{Index: uint64(i), Count: 1, State: st, Addr: addr})
	}
	return out
}

// TestCompressedFilesEndToEnd: zero-range on a compressed file, for every cluster size 4…256 blocks,
// is the kernel's EOPNOTSUPP in `zrviz run` (exit 0, text and JSON, one range or --ops) and in
// GET /api/images/{id}/run (200), with no call and the slot map, i_size and i_blocks unchanged.
func TestCompressedFilesEndToEnd(t *testing.T) {
	img, files := buildCompressedImage(t)
	im, err := imgio.OpenFileContext(context.Background(), img, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	before := map[string][]imgio.Extent{}
	for _, cf := range files {
		f, err := im.Lookup(cf.path)
		if err != nil {
			t.Fatal(err)
		}
		in := f.Inode()
		ds, err := f.Dnodes()
		if err != nil {
			t.Fatal(err)
		}
		if in.ClusterSize != cf.cluster || in.AddrsPerInode != cf.api || in.AddrsPerBlock != cf.apb || len(ds) != 4 || in.Size != cf.size {
			t.Fatalf("%s: imgio reads cluster %d, slots %d/%d, %d dnodes, size %d; patched %d, %d/%d, 4, %d", cf.path,
				in.ClusterSize, in.AddrsPerInode, in.AddrsPerBlock, len(ds), in.Size, cf.cluster, cf.api, cf.apb, cf.size)
		}
		ext, err := f.Extents()
		if err != nil {
			t.Fatal(err)
		}
		if want := slotExtents(cf.slots, cf.size); !slices.Equal(ext, want) {
			t.Fatalf("%s: imgio's map differs from the patch: %d extents, want %d", cf.path, len(ext), len(want))
		}
		before[cf.path] = ext
	}

	// Ranges: the whole file (default length), one across the inode/i_nid[0] and i_nid[0]/i_nid[1]
	// boundaries, unaligned, and one running past EOF with keep_size.
	ranges := func(cf compressedFile) [][]string {
		return [][]string{
			nil,
			{"--offset", fmt.Sprint(cf.api*blk - 5000), "--length", fmt.Sprint((cf.apb + 3) * blk)},
			{"--offset", fmt.Sprint(cf.size - 10000), "--length", "1MiB", "--keep-size"},
		}
	}
	type result struct {
		Mode         string      `json:"mode"`
		Errno        string      `json:"errno"`
		Calls        [][2]uint32 `json:"calls"`
		SizeBefore   int64       `json:"sizeBefore"`
		SizeAfter    int64       `json:"sizeAfter"`
		BlocksBefore uint64      `json:"blocksBefore"`
		BlocksAfter  uint64      `json:"blocksAfter"`
		After        struct {
			Extents []imgio.Extent `json:"extents"`
		} `json:"after"`
	}
	type runBody struct {
		Path    string   `json:"path"`
		Results []result `json:"results"`
	}
	checkRun := func(t *testing.T, what, path string, got runBody) {
		t.Helper()
		if got.Path != path || len(got.Results) != 2 {
			t.Fatalf("%s: %+v", what, got)
		}
		for _, r := range got.Results {
			if r.Errno != "EOPNOTSUPP" || len(r.Calls) != 0 || r.SizeAfter != r.SizeBefore || r.BlocksAfter != r.BlocksBefore ||
				!slices.Equal(r.After.Extents, before[path]) {
				t.Errorf("%s %s: errno %q, %d calls, size %d→%d, blocks %d→%d, map unchanged %v", what, r.Mode, r.Errno, len(r.Calls),
					r.SizeBefore, r.SizeAfter, r.BlocksBefore, r.BlocksAfter, slices.Equal(r.After.Extents, before[path]))
			}
		}
	}

	for _, cf := range files {
		t.Run(fmt.Sprintf("cli/cluster-%d", cf.cluster), func(t *testing.T) {
			for _, rg := range ranges(cf) {
				args := append(append([]string{"run", "--image", img, "--json"}, rg...), cf.path)
				var got runBody
				if err := json.Unmarshal([]byte(mustRunMain(t, args...)), &got); err != nil {
					t.Fatal(err)
				}
				checkRun(t, strings.Join(args[4:], " "), cf.path, got)
			}
			text := mustRunMain(t, "run", "--image", img, cf.path)
			if !strings.Contains(text, "EOPNOTSUPP") {
				t.Errorf("text output lacks EOPNOTSUPP:\n%s", text)
			}
			// Two operations on the file in a row: the second starts from the first's (unchanged) state.
			ops := filepath.Join(t.TempDir(), "ops")
			line := fmt.Sprintf("zero %s 0 %d\nzero %s 4096 8192 keep_size\n", cf.path, cf.size, cf.path)
			if err := os.WriteFile(ops, []byte(line), 0o644); err != nil {
				t.Fatal(err)
			}
			var seq struct {
				Ops []runBody `json:"ops"`
			}
			if err := json.Unmarshal([]byte(mustRunMain(t, "run", "--image", img, "--json", "--ops", ops)), &seq); err != nil {
				t.Fatal(err)
			}
			if len(seq.Ops) != 2 {
				t.Fatalf("--ops: %d operations", len(seq.Ops))
			}
			for i, o := range seq.Ops {
				checkRun(t, fmt.Sprintf("--ops operation %d", i+1), cf.path, o)
			}
		})
	}

	// The API of `zrviz serve IMG`.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--quiet", img}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	go io.Copy(io.Discard, pr)
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("serve did not print its URL: %q", line)
	}
	base := strings.TrimSuffix(strings.Fields(line[i:])[0], "/")
	getJSON := func(t *testing.T, u string, v any) int {
		t.Helper()
		res, err := http.Get(base + u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %d %v: %.300s", u, res.StatusCode, err, b)
		}
		return res.StatusCode
	}
	var images []struct {
		ID string `json:"id"`
	}
	if code := getJSON(t, "/api/images", &images); code != http.StatusOK {
		t.Fatalf("GET /api/images: %d", code)
	}
	id := ""
	for _, im := range images {
		if im.ID != "demo" {
			id = im.ID
		}
	}
	if id == "" {
		t.Fatalf("the compressed image is not served: %+v", images)
	}
	for _, cf := range files {
		t.Run(fmt.Sprintf("api/cluster-%d", cf.cluster), func(t *testing.T) {
			for _, q := range []url.Values{
				{"path": {cf.path}},
				{"path": {cf.path}, "offset": {fmt.Sprint(cf.api*blk - 5000)}, "length": {fmt.Sprint((cf.apb + 3) * blk)}, "mode": {"both"}},
				{"path": {cf.path}, "offset": {fmt.Sprint(cf.size - 10000)}, "length": {"1048576"}, "keepSize": {"true"}},
			} {
				var got runBody
				if code := getJSON(t, "/api/images/"+id+"/run?"+q.Encode(), &got); code != http.StatusOK {
					t.Fatalf("GET run?%s: %d", q.Encode(), code)
				}
				checkRun(t, "API "+q.Encode(), cf.path, got)
			}
		})
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}
