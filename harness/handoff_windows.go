package harness

import "errors"

// StartWarm: the warm hand-off runs on Unix only.
func StartWarm(exe, cfgFile string) error {
	return errors.New("the warm hand-off runs on Unix only")
}
