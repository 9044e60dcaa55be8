#!/usr/bin/env bash
# Builds the C# client with Mono's mcs, checks that it uses only .NET
# Standard types, and runs its tests against a real podium built from this
# repository. Needs mcs, mono, System.Net.Http and Go (.ci/csharp installs
# Mono). NETSTANDARD_DLL points at a netstandard.dll facade for the API
# check (default: Mono's, from mono-devel); without one the check is
# skipped unless PODIUM_CSHARP_STRICT=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "csharp: building podium"
(cd "$repo" && go build -o "$out/podium" ./cmd/podium)

echo "csharp: compiling the library, the tests (with docs/API.md's webhook snippet) and README's Unity example (C# 7, warnings are errors)"
mcs -target:library -langversion:7 -warnaserror+ -nologo -r:System.Net.Http.dll \
  -doc:"$out/Podium.xml" -out:"$out/Podium.dll" "$here"/src/*.cs
# docs/API.md's C# webhook verification snippet, as published, added to the
# tests' class (the WebhookSnippet test calls it).
awk '/^```csharp$/ { buf = ""; inb = 1; next }
     inb && /^```$/ { if (buf ~ /^\/\/ C# \(/) printf "%s", buf; inb = 0; next }
     inb { buf = buf $0 "\n" }' "$repo/docs/API.md" >"$out/snippet.txt"
grep -q 'static bool Verify(' "$out/snippet.txt"
{ grep '^using ' "$out/snippet.txt"
  echo 'namespace Podium.Tests { static partial class Program {'
  grep -v '^using ' "$out/snippet.txt"
  echo '} }'; } >"$out/WebhookSnippet.cs"
mcs -langversion:7 -warnaserror+ -nologo -r:"$out/Podium.dll" -r:System.Net.Http.dll \
  -out:"$out/Podium.Tests.exe" "$here"/tests/*.cs "$out/WebhookSnippet.cs"

# README.md's Unity example, against stubs of the few UnityEngine types it uses.
awk '/^```csharp$/ { buf = ""; inb = 1; next }
     inb && /^```$/ { if (buf ~ /using UnityEngine;/) printf "%s", buf; inb = 0; next }
     inb { buf = buf $0 "\n" }' "$here/README.md" >"$out/UnityExample.cs"
grep -q MonoBehaviour "$out/UnityExample.cs"
mcs -target:library -langversion:7 -warnaserror+ -nologo -r:"$out/Podium.dll" -r:System.Net.Http.dll \
  -out:"$out/UnityExample.dll" "$out/UnityExample.cs" "$here/tools/UnityStubs.cs"

ns=${NETSTANDARD_DLL:-/usr/lib/mono/4.5/Facades/netstandard.dll}
if [ -f "$ns" ]; then
  mcs -nologo -out:"$out/ApiCheck.exe" "$here/tools/ApiCheck.cs"
  mono "$out/ApiCheck.exe" "$ns" "$out/Podium.dll"
elif [ "${PODIUM_CSHARP_STRICT:-0}" = 1 ]; then
  echo "csharp: no netstandard.dll at $ns (set NETSTANDARD_DLL)" >&2
  exit 1
else
  echo "csharp: skipped the .NET Standard check: no netstandard.dll at $ns"
fi

echo "csharp: running the tests"
cd "$out"
PODIUM_BIN="$out/podium" mono --debug Podium.Tests.exe "$@"
