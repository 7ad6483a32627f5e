#!/usr/bin/env bash
# vaddata.sh DIR: install the real recordings bench/vad's evaluation set
# (bench/vad/realset) is built from into DIR, from Debian's archive:
# `apt-get download` fetches the packages (nothing is installed), dpkg-deb
# extracts the audio directories into DIR/root, each package's copyright
# file goes to DIR/licenses, and the .deb files are deleted. About 615 MB
# are downloaded and 440 MB kept. Idempotent and quiet when DIR is
# complete (DIR/.complete holds the data version below); make vad-data runs
# it (VADDATA=DIR, default ~/.cache/banter/vaddata).
#
# The Ogg Vorbis music and the GSM prompts are decoded when the set is
# built, by oggdec (vorbis-tools) and sox: installed with apt-get when
# missing (through sudo when not root). bench/vad/README.md lists the
# sources and their licences.
set -euo pipefail

dir=${1:?usage: vaddata.sh DIR}
version=2 # bench/vad/realset.DataVersion

if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$version" ] && command -v oggdec >/dev/null 2>&1 && command -v sox >/dev/null 2>&1; then
	exit 0
fi

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
if ! command -v oggdec >/dev/null 2>&1 || ! command -v sox >/dev/null 2>&1; then
	echo "vad-data: installing vorbis-tools and sox (apt-get) for oggdec and sox"
	$SUDO apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends vorbis-tools sox >/dev/null
fi
if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$version" ]; then
	exit 0
fi

# package → the directories (in the package) bench/vad uses
declare -A dirs=(
	[asterisk-core-sounds-en-g722]=./usr/share/asterisk/sounds/en_US_f_Allison
	[asterisk-core-sounds-es-g722]=./usr/share/asterisk/sounds/es_MX_f_Allison
	[asterisk-core-sounds-fr-g722]=./usr/share/asterisk/sounds/fr_CA_f_June
	[asterisk-core-sounds-it-g722]=./usr/share/asterisk/sounds/it_IT_m_Carlo
	[asterisk-core-sounds-ru-g722]=./usr/share/asterisk/sounds/ru_RU_f_IvrvoiceRU
	[codec2-examples]=./usr/share/codec2/raw
	[asterisk-moh-opsound-g722]=./usr/share/asterisk/moh
	[bucklespring-data]=./usr/share/buckle/wav
	[wesnoth-1.16-music]=./usr/share/games/wesnoth/1.16/data/core/music
	[freedroidrpg-data]=./usr/share/freedroidrpg/data/sound/music
	# the fresh split (since data version 2)
	[asterisk-prompt-es-co]=./usr/share/asterisk/sounds/es
	[asterisk-prompt-fr-armelle]=./usr/share/asterisk/sounds/fr
	[asterisk-prompt-it-menardi-wav]=./usr/share/asterisk/sounds/it_IT_f_Menardi
	[colobot-common-sounds]=./usr/share/games/colobot/music
	[fillets-ng-data-cs]=./usr/share/games/fillets-ng/sound
	[fillets-ng-data-nl]=./usr/share/games/fillets-ng/sound
)

echo "vad-data: fetching ${#dirs[@]} Debian packages into $dir (about 615 MB to download, 440 MB kept)"
rm -rf "$dir/root" "$dir/licenses" "$dir/debs" "$dir/.complete"
mkdir -p "$dir/debs" "$dir/root" "$dir/licenses"
cd "$dir/debs"
# apt-get download as root warns that _apt cannot write here; that is fine
if ! apt-get download -qq "${!dirs[@]}" 2>/dev/null; then
	$SUDO apt-get update -qq >/dev/null
	apt-get download -qq "${!dirs[@]}" 2>&1 | grep -v 'unsandboxed' || true
fi
for pkg in "${!dirs[@]}"; do
	deb=$(ls "${pkg}"_*.deb)
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/root" "${dirs[$pkg]}" "./usr/share/doc/$pkg/copyright"
	mv "$dir/root/usr/share/doc/$pkg/copyright" "$dir/licenses/$pkg.copyright"
	dpkg-deb -f "$deb" Package Version >"$dir/licenses/$pkg.version"
done
rm -rf "$dir/debs" "$dir/root/usr/share/doc"
echo "$version" >"$dir/.complete"
echo "vad-data: done ($(du -sh "$dir" | cut -f1) in $dir)"
