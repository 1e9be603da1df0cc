"""What a served memory keeps on disk, per user (a namespace: one user's folder, `users/<key>/`).
`state_folder` says where every file lives; `namespace_keys` what a user id becomes on disk;
`episode_log` the append-only log of remembers and forgets; `episode_draft` an episode checked but
not yet stored; `images` what counts as an image; `namespace_files` the rule that nothing
outlives its episode; `recall_log` recalls and the agent's feedback; `versions` which program
answers, and every one it ran; `trials` the pointer to a version on trial and its counts. (The export and import format, which checks each line as a
request, is `serve.transfer`.)"""
