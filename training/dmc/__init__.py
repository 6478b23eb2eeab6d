"""Deep Monte-Carlo self-play training, in parts (``twilight train``'s loop and command line
are :mod:`twilight_env.training.train`):

- :mod:`twilight_env.training.dmc.learner`: the learner's state, its construction and one
  learner step;
- :mod:`twilight_env.training.dmc.actors`: the self-play sources (in process, actor
  processes, Ray actors);
- :mod:`twilight_env.training.dmc.runs`: the run directory, evaluation, checkpoint,
  TensorBoard scalars and progress bar.

The helpers it shares with expert iteration and the best responder (device, interrupts,
random-generator states) are :mod:`twilight_env.training.runtime`.
"""
