#!/bin/sh
#SBATCH --job-name=distributed_example
#SBATCH --output=stdout.%j
#SBATCH --error=stderr.%j
#SBATCH --partition=gpu
#SBATCH --nodes=2
#SBATCH --time=0:12:00
#SBATCH --signal=SIGINT
#SBATCH --gres=gpu:8
#SBATCH --ntasks-per-node=8
#SBATCH --mem=80G
#SBATCH --cpus-per-task=2

srun python -u -m parlai.scripts.distributed_train \
-t blended_skill_talk,wizard_of_wikipedia,convai2:normalized \
--distributed-world-size 2 \
...
