"""Makes the spoken commands of the demo's speech tests, once (their WAVs are committed).

    python3 tests/data/voice/make_spoken_commands.py   # needs Debian's `flite` package

flite's US English voice `slt` says each sentence at 16 kHz mono 16-bit; half a second
of silence goes before it (Chromium's fake microphone starts as the recording does) and
one second after it (the recording stops in the silence).
"""

import subprocess
import tempfile
import wave
from pathlib import Path

HERE = Path(__file__).resolve().parent
SENTENCES = {
    "turn_on_the_kitchen_light.wav": "turn on the kitchen light",
    "add_milk_to_the_shopping_list.wav": "add milk to the shopping list",
}
RATE = 16000
BEFORE, AFTER = 0.5, 1.0  # seconds of silence


def main() -> None:
    for name, sentence in SENTENCES.items():
        with tempfile.TemporaryDirectory() as folder:
            said = Path(folder) / "said.wav"
            subprocess.run(["flite", "-voice", "slt", "-t", sentence, "-o", str(said)], check=True)
            with wave.open(str(said)) as source:
                assert (source.getframerate(), source.getnchannels()) == (RATE, 1)
                assert source.getsampwidth() == 2
                speech = source.readframes(source.getnframes())
        with wave.open(str(HERE / name), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            out.writeframes(bytes(int(BEFORE * RATE) * 2) + speech + bytes(int(AFTER * RATE) * 2))


if __name__ == "__main__":
    main()
