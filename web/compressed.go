package web

import (
	"fmt"
	"slices"

	"github.com/zrviz/zrviz/imgio"
)

// compressionNote says how a compressed file is compressed, as the pages show it: "compressed (lz4,
// cluster 4 blocks)"; "" for a file that is not. f2fs refuses to zero-range such a file
// (EOPNOTSUPP), so the pages say it before the player does.
func compressionNote(in imgio.Inode) string {
	if in.ClusterSize <= 0 {
		return ""
	}
	alg := in.CompressAlgorithm
	if alg == "" {
		alg = "unknown algorithm"
	}
	return fmt.Sprintf("compressed (%s, cluster %d blocks)", alg, in.ClusterSize)
}

// treeCompression returns the compression note of a tree entry. Only a volume with the compression
// feature can hold compressed files, so only there is each regular file's inode read (one NAT entry
// and one block); other images cost nothing.
func treeCompression(si *StoredImage, features []string, e imgio.Entry) string {
	if e.Type != imgio.TypeFile || !slices.Contains(features, "compression") {
		return ""
	}
	f, err := si.Image.File(e.Ino)
	if err != nil {
		return ""
	}
	return compressionNote(f.Inode())
}
