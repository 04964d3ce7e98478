"""Operations tooling that runs the whole deployment, outside the Django apps (`make cluster`)."""
