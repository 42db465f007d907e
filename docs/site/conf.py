# Sphinx configuration of the collection's docs site (docs/site/build.sh, make docs).
# Offline by design: no intersphinx (its inventories would be fetched from the network), so every
# reference must resolve inside the site; nitpicky + -W turn an unresolved one into a failure.
project = 'deevnet.tenant'
copyright = 'deevnet.tenant developers'  # pylint: disable=redefined-builtin  # Sphinx's name
title = 'deevnet.tenant'
html_short_title = 'deevnet.tenant'

extensions = ['sphinx_antsibull_ext', 'myst_parser']
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
# The Markdown docs link to headings (tenant-contract.md#...): myst makes those anchors.
myst_heading_anchors = 3

pygments_style = 'ansible'
highlight_language = 'YAML+Jinja'

html_theme = 'sphinx_ansible_theme'
html_show_sphinx = False
display_version = False
# Text as written (a heading is checked word for word by linkcheck.py; "tenant's" stays ASCII).
smartquotes = False
html_use_modindex = False
html_use_index = False
html_copy_source = False

default_role = 'any'
nitpicky = True

# The theme's logo links to "documentation home", '/' by default: a path outside this site wherever
# it is served. The collection's repository (galaxy.yml) is its home.
html_theme_options = {'documentation_home_url': 'https://github.com/deevnet/tenant'}
