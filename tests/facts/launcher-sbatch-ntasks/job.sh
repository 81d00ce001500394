#SBATCH --nodes=1
#SBATCH --ntasks=4
#SBATCH --cpus-per-task=1
#SBATCH --ntasks-per-socket=2
#SBATCH --mem-per-cpu=5gb
#SBATCH --time=4-00:00:00
#SBATCH --distribution=cyclic:cyclic
source ~/anaconda3/etc/profile.d/conda.sh
conda activate schnet-env
pwd; hostname; date
spktrain experiment=qm9_atomwise
date
