"""Drop what the chosen kind does not need, install the license, generate the config reference."""

import shutil
import sys
from pathlib import Path

KIND = "{{ cookiecutter.kind }}"
LICENSE = "{{ cookiecutter.license }}"
CI = "{{ cookiecutter.ci }}".lower() in ("true", "yes", "1", "y")
PACKAGE = "{{ cookiecutter.package_name }}"

root = Path.cwd()
package = root / "src" / PACKAGE
unused = {
    "source": [package / "_sink.py", root / "examples" / "sink.properties", root / "examples" / "data" / "out"],
    "sink": [package / "_source.py", root / "examples" / "source.properties", root / "examples" / "data" / "in"],
    "both": [],
}[KIND]
if not CI:
    unused.append(root / ".github")
for path in unused:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()

licenses = root / "licenses"
(licenses / f"{LICENSE}.txt").replace(root / "LICENSE")
shutil.rmtree(licenses)

# The README's configuration reference, generated from the ConfigDefs just written.
sys.path.insert(0, str(root / "src"))
from {{ cookiecutter.package_name }}.readme import update  # noqa: E402

update(root / "README.md")
