package core

import "strconv"

// maxFileBlocks is f2fs's max_file_blocks(NULL): two direct, two indirect
// and one double-indirect subtree of 1018-slot nodes, capped at 2^32 blocks.
// s_maxbytes is this times the block size.
const maxFileBlocks = 2*addrsPerBlock + 2*addrsPerBlock*nidsPerBlock + addrsPerBlock*nidsPerBlock*nidsPerBlock

const maxBytes = int64(maxFileBlocks) * blockSize

// nodeKey names one node of a file's tree: top is -1 for the inode block or
// the i_nid slot 0..4; a and b are the child positions below an indirect or
// double-indirect node (-1 when unused).
type nodeKey struct{ top, a, b int32 }

// dnodePos locates the dnode that holds a file block index, as
// get_node_path does.
type dnodePos struct {
	start uint64 // file block index of the node's slot 0
	cap   int    // slots in the node
	ofs   int    // index - start
	depth int    // nodes on the path below the inode: 0..3
	path  [3]nodeKey
}

// dnodeGeom is how many data slots a file's dnodes hold: the inode (addrs_per_inode) and each direct
// node (addrs_per_block). Both are rounded down to the cluster size for a compressed inode, as the
// kernel's ADDRS_PER_PAGE does, so the node a block index lands in depends on the file.
type dnodeGeom struct{ api, apb uint64 }

func locate(index uint64, g dnodeGeom) dnodePos {
	api := g.api
	if index < api {
		return dnodePos{start: 0, cap: int(api), ofs: int(index)}
	}
	b := index - api
	base := api
	apb := g.apb
	ind := apb * nidsPerBlock
	for top := int32(0); top < 2; top++ {
		if b < apb {
			return dnodePos{start: base, cap: int(apb), ofs: int(b), depth: 1,
				path: [3]nodeKey{{top, -1, -1}}}
		}
		b -= apb
		base += apb
	}
	for top := int32(2); top < 4; top++ {
		if b < ind {
			a := int32(b / apb)
			return dnodePos{start: base + uint64(a)*apb, cap: int(apb), ofs: int(b % apb), depth: 2,
				path: [3]nodeKey{{top, -1, -1}, {top, a, -1}}}
		}
		b -= ind
		base += ind
	}
	a := int32(b / ind)
	r := b % ind
	c := int32(r / apb)
	return dnodePos{start: base + uint64(a)*ind + uint64(c)*apb, cap: int(apb), ofs: int(r % apb), depth: 3,
		path: [3]nodeKey{{4, -1, -1}, {4, a, -1}, {4, a, c}}}
}

// String names the node as imgio does: "inode", "i_nid[0]", "i_nid[2]/3",
// "i_nid[4]/1/7".
func (k nodeKey) String() string {
	if k.top < 0 {
		return "inode"
	}
	s := "i_nid[" + strconv.Itoa(int(k.top)) + "]"
	if k.a >= 0 {
		s += "/" + strconv.Itoa(int(k.a))
	}
	if k.b >= 0 {
		s += "/" + strconv.Itoa(int(k.b))
	}
	return s
}

// name is the path of the dnode itself.
func (p *dnodePos) name() string {
	if p.depth == 0 {
		return "inode"
	}
	return p.path[p.depth-1].String()
}

// subtreeEnd is one past the last file block index under the node at level i (0 = the node
// i_nid points to) of pos's path: the whole direct node, indirect node or double-indirect node.
func subtreeEnd(pos *dnodePos, i int, g dnodeGeom) uint64 {
	if i >= pos.depth-1 {
		return pos.start + uint64(pos.cap)
	}
	ind := g.apb * nidsPerBlock
	top := pos.path[0].top
	switch {
	case pos.depth == 2: // i == 0: the indirect node i_nid[2] or i_nid[3]
		return g.api + 2*g.apb + uint64(top-2+1)*ind
	case i == 0: // the double-indirect node
		return g.api + 2*g.apb + 2*ind + ind*nidsPerBlock
	default: // i == 1: an indirect node below the double-indirect one
		return g.api + 2*g.apb + 2*ind + uint64(pos.path[1].a+1)*ind
	}
}

// isDnode says whether the node holds data slots: i_nid[0], i_nid[1], or a child of an indirect
// node (i_nid[2]/a, i_nid[3]/a) or of a double-indirect node's child (i_nid[4]/a/b).
func (k nodeKey) isDnode() bool {
	switch {
	case k.top < 0:
		return false
	case k.top < 2:
		return true
	case k.top < 4:
		return k.a >= 0
	}
	return k.b >= 0
}

// level is k's depth below the inode: 0 for the node i_nid points at, 1 its child, 2 its grandchild
// (NodeAddrSource's level).
func (k nodeKey) level() int {
	switch {
	case k.b >= 0:
		return 2
	case k.a >= 0:
		return 1
	}
	return 0
}

// parent is the node that points at k (ok false for a node the inode points at).
func (k nodeKey) parent() (nodeKey, bool) {
	switch {
	case k.b >= 0:
		return nodeKey{k.top, k.a, -1}, true
	case k.a >= 0:
		return nodeKey{k.top, -1, -1}, true
	}
	return nodeKey{}, false
}
