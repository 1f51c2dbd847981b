#!/usr/bin/env node
// The `attune` command of the npm package: it runs the native attune binary
// of this platform, which npm installed as one of the package's
// optionalDependencies (@attune-dev/attune-OS-CPU; npm installs only the one
// whose "os" and "cpu" match). Arguments, standard streams, the exit code
// and a signal that ended the binary pass through.
'use strict'

const { spawnSync } = require('child_process')
const fs = require('fs')
const path = require('path')

// The platform packages by Node's process.platform and process.arch.
const PLATFORMS = {
  'darwin arm64': '@attune-dev/attune-darwin-arm64',
  'darwin x64': '@attune-dev/attune-darwin-x64',
  'linux arm64': '@attune-dev/attune-linux-arm64',
  'linux x64': '@attune-dev/attune-linux-x64',
  'win32 arm64': '@attune-dev/attune-win32-arm64',
  'win32 x64': '@attune-dev/attune-win32-x64',
}

function fail(message) {
  process.stderr.write('attune (npm): ' + message + '\n')
  process.exit(1)
}

function binaryPath() {
  // ATTUNE_BINARY runs another build (one made from a checkout, say).
  if (process.env.ATTUNE_BINARY) return process.env.ATTUNE_BINARY
  const key = process.platform + ' ' + process.arch
  const pkg = PLATFORMS[key]
  if (!pkg) {
    fail('no attune binary is published for ' + key + '; build one with ' +
      '`go install github.com/attune-dev/attune/cmd/attune@latest` and set ATTUNE_BINARY to it')
  }
  let dir
  try {
    dir = path.dirname(require.resolve(pkg + '/package.json'))
  } catch (e) {
    fail('the package ' + pkg + ', which holds the binary for ' + key + ', is not installed. ' +
      'npm skips optional dependencies under --omit=optional or --no-optional: install attune again without it')
  }
  const bin = path.join(dir, 'bin', process.platform === 'win32' ? 'attune.exe' : 'attune')
  if (!fs.existsSync(bin)) fail(bin + ' is missing: reinstall ' + pkg)
  return bin
}

const bin = binaryPath()
const r = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit', windowsHide: true })
if (r.error) fail('running ' + bin + ': ' + r.error.message)
if (r.signal) {
  process.kill(process.pid, r.signal)
  process.exit(1) // the signal is not fatal to Node (SIGPIPE)
}
process.exit(r.status === null ? 1 : r.status)
