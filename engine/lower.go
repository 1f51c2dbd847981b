package engine

import "errors"

func lowerScheme(file string, src []byte) (string, error) { return "", errors.New("x") }
