//go:build windows

package harness

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// fileIDInfo is FILE_ID_INFO: the volume's serial number and the file's
// 128-bit ID, unique on the volume on NTFS and ReFS alike (the 64-bit index
// of GetFileInformationByHandle is not unique on ReFS, a Dev Drive's file
// system).
type fileIDInfo struct {
	VolumeSerialNumber uint64
	FileID             [16]byte
}

// fileID is Windows' device and inode of the file at path: its volume's
// serial number and its file ID. A store file replaced by another (deleted
// and created again, or moved over) has another ID, so a reach taken on the
// old one is not used (quick.go), as on Unix. A file ID of more than 64
// bits is folded into ino by FNV-1a; on NTFS it fits and is kept as is.
// Where the system cannot tell the ID, ok is false and the event takes the
// full path. Like os.Stat, it follows a symbolic link.
func fileID(path string) (dev, ino uint64, ok bool) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, 0, false
	}
	// attributes only, shared every way: an open store is not disturbed
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, 0, false
	}
	defer windows.CloseHandle(h)
	var info fileIDInfo
	if err := windows.GetFileInformationByHandleEx(h, windows.FileIdInfo,
		(*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err == nil {
		lo, hi := binary.LittleEndian.Uint64(info.FileID[:8]), binary.LittleEndian.Uint64(info.FileID[8:])
		if hi == 0 {
			return info.VolumeSerialNumber, lo, true
		}
		f := fnv.New64a()
		f.Write(info.FileID[:])
		return info.VolumeSerialNumber, f.Sum64(), true
	}
	// a file system that does not tell FILE_ID_INFO
	var bh windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bh); err != nil {
		return 0, 0, false
	}
	return uint64(bh.VolumeSerialNumber), uint64(bh.FileIndexHigh)<<32 | uint64(bh.FileIndexLow), true
}

// FileOwner is not checked on Windows: a folder's ACL says who may use it.
func FileOwner(os.FileInfo) (int, bool) { return 0, false }
