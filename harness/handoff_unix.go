//go:build unix

package harness

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// StartWarm starts `attune hook serve --socket` for the configuration file
// cfgFile in the background (its own session, no terminal, its standard
// error appended to the socket's .log file beside it), and does not wait
// for it. While a start is under way (a .spawn file younger than ten
// seconds), it starts none: events that arrive together start one server.
func StartWarm(exe, cfgFile string) error {
	path := WarmSocket(cfgFile)
	if err := secureDir(filepath.Dir(path)); err != nil {
		return err
	}
	spawn := path + ".spawn"
	f, err := os.OpenFile(spawn, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if st, serr := os.Stat(spawn); serr == nil && time.Since(st.ModTime()) < 10*time.Second {
			return nil
		}
		_ = os.Remove(spawn)
		f, err = os.OpenFile(spawn, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	f.Close()
	logf, err := os.OpenFile(path+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		_ = os.Remove(spawn)
		return err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "hook", "serve", "--socket", "--config", cfgFile, "--idle", WarmIdle.String())
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = os.Remove(spawn)
		return err
	}
	return cmd.Process.Release()
}
