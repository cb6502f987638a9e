"""The command line: `catalogo serve | migrate | seed | exportar | importar | desfazer |
usuarios | tokens | webhooks | removidos`. main.py reads the arguments, files.py moves the
catalog out to a file and in from one, serve.py runs the server. May import services,
storage, runtime and domain; never http (it serves the app by name)."""
